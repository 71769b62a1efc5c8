/** Who the agent is; identity fields are single-line (line breaks become spaces). */
export interface PromptAgent {
  name: string;
  role: string;
  developedBy: string;
  background: string;
  behaviors: string[];
  communicationPatterns: string[];
}

/** The conversation state the agent is in; `name` is single-line. */
export interface PromptState {
  name: string;
  objective: string;
  actions: string[];
  intraStateNavigationGuidelines: string[];
  actionGuidelines: string[];
  boundaryConstraints: string[];
}

/** Everything the system prompt is built from. */
export interface SystemPromptInput {
  agent: PromptAgent;
  state: PromptState;
  globalGuidelines?: string[];
  globalConstraints?: string[];
  userContext?: string[];
  workingMemory?: string[];
  /** A one-off instruction for this turn, placed last so it weighs most. */
  dynamicInstruction?: string;
}

/** The sections read back from a system prompt; absent sections come back empty. */
export interface SystemPromptSections extends Required<Omit<SystemPromptInput, 'dynamicInstruction'>> {
  dynamicInstruction?: string;
}

const HEADING = '## ';
const STATE_HEADING = 'Current state: ';
const ITEM = '- ';
const CONTINUATION = '  ';

// Section headings, shared by the builder and the parser.
const HEADINGS = {
  identity: 'Identity',
  background: 'Background',
  behaviors: 'Behaviors',
  communicationPatterns: 'Communication patterns',
  objective: 'Objective',
  actions: 'Actions',
  actionGuidelines: 'Action guidelines',
  navigationGuidelines: 'Navigation guidelines',
  boundaryConstraints: 'Boundary constraints',
  globalGuidelines: 'Global guidelines',
  globalConstraints: 'Global constraints',
  userContext: 'User context',
  workingMemory: 'Working memory',
  instruction: 'Instruction',
} as const;

const IDENTITY = { name: 'Name', role: 'Role', developedBy: 'Developed by' } as const;

const PREAMBLE =
  'You are the conversational agent described below. Stay in character, pursue the objective of the ' +
  'current state using its actions, and respect every guideline and constraint.';

const singleLine = (value: string): string => value.replace(/\s*\r?\n\s*/g, ' ').trim();

// A text line that looks like a heading (or like an escape) gets a backslash, so markdown an
// author wrote into a background or objective cannot open a section of its own.
const escapeLine = (line: string): string => (line.startsWith('#') || line.startsWith('\\') ? `\\${line}` : line);
const unescapeLine = (line: string): string => (line.startsWith('\\') ? line.slice(1) : line);

const textSection = (heading: string, text: string): string[][] =>
  text.trim() === '' ? [] : [[HEADING + heading, ...text.trim().split(/\r?\n/).map(escapeLine)]];

// Multi-line items continue on indented lines, as in markdown.
const listSection = (heading: string, items: string[] = []): string[][] =>
  items.length === 0
    ? []
    : [
        [
          HEADING + heading,
          ...items.flatMap((item) => item.split(/\r?\n/).map((line, i) => (i === 0 ? ITEM : CONTINUATION) + line)),
        ],
      ];

/**
 * Builds the plain-text system prompt: a short preamble, then `## <Heading>` sections
 * separated by blank lines. Empty sections are left out. {@link parseSystemPrompt} reads it back.
 */
export const buildSystemPrompt = (input: SystemPromptInput): string => {
  const { agent, state } = input;
  const blocks = [
    [PREAMBLE],
    [
      HEADING + HEADINGS.identity,
      ...(['name', 'role', 'developedBy'] as const).map((key) => `${IDENTITY[key]}: ${singleLine(agent[key])}`),
    ],
    ...textSection(HEADINGS.background, agent.background),
    ...listSection(HEADINGS.behaviors, agent.behaviors),
    ...listSection(HEADINGS.communicationPatterns, agent.communicationPatterns),
    [HEADING + STATE_HEADING + singleLine(state.name)],
    ...textSection(HEADINGS.objective, state.objective),
    ...listSection(HEADINGS.actions, state.actions),
    ...listSection(HEADINGS.actionGuidelines, state.actionGuidelines),
    ...listSection(HEADINGS.navigationGuidelines, state.intraStateNavigationGuidelines),
    ...listSection(HEADINGS.boundaryConstraints, state.boundaryConstraints),
    ...listSection(HEADINGS.globalGuidelines, input.globalGuidelines),
    ...listSection(HEADINGS.globalConstraints, input.globalConstraints),
    ...listSection(HEADINGS.userContext, input.userContext),
    ...listSection(HEADINGS.workingMemory, input.workingMemory),
    ...textSection(HEADINGS.instruction, input.dynamicInstruction ?? ''),
  ];
  return blocks.map((lines) => lines.join('\n')).join('\n\n');
};

/**
 * Reads the sections back from a prompt made by {@link buildSystemPrompt}. Lenient with other
 * text: the preamble and unknown headings are ignored, missing sections come back empty.
 */
export const parseSystemPrompt = (prompt: string): SystemPromptSections => {
  const bodies = new Map<string, string[]>();
  let stateName = '';
  let body: string[] | undefined;
  for (const line of prompt.split(/\r?\n/)) {
    if (!line.startsWith(HEADING)) {
      body?.push(line);
      continue;
    }
    const heading = line.slice(HEADING.length).trim();
    if (heading.startsWith(STATE_HEADING)) stateName = heading.slice(STATE_HEADING.length).trim();
    body = [];
    bodies.set(heading, body);
  }

  const text = (heading: string): string => (bodies.get(heading) ?? []).map(unescapeLine).join('\n').trim();
  const list = (heading: string): string[] => {
    const items: string[] = [];
    for (const line of bodies.get(heading) ?? []) {
      if (line.startsWith(ITEM)) items.push(line.slice(ITEM.length));
      else if (line.startsWith(CONTINUATION) && items.length > 0)
        items[items.length - 1] += `\n${line.slice(CONTINUATION.length)}`;
    }
    return items;
  };
  const identity = new Map(
    (bodies.get(HEADINGS.identity) ?? []).flatMap((line) => {
      const separator = line.indexOf(': ');
      return separator > 0 ? [[line.slice(0, separator), line.slice(separator + 2).trim()] as const] : [];
    }),
  );
  const instruction = text(HEADINGS.instruction);

  return {
    agent: {
      name: identity.get(IDENTITY.name) ?? '',
      role: identity.get(IDENTITY.role) ?? '',
      developedBy: identity.get(IDENTITY.developedBy) ?? '',
      background: text(HEADINGS.background),
      behaviors: list(HEADINGS.behaviors),
      communicationPatterns: list(HEADINGS.communicationPatterns),
    },
    state: {
      name: stateName,
      objective: text(HEADINGS.objective),
      actions: list(HEADINGS.actions),
      intraStateNavigationGuidelines: list(HEADINGS.navigationGuidelines),
      actionGuidelines: list(HEADINGS.actionGuidelines),
      boundaryConstraints: list(HEADINGS.boundaryConstraints),
    },
    globalGuidelines: list(HEADINGS.globalGuidelines),
    globalConstraints: list(HEADINGS.globalConstraints),
    userContext: list(HEADINGS.userContext),
    workingMemory: list(HEADINGS.workingMemory),
    ...(instruction === '' ? {} : { dynamicInstruction: instruction }),
  };
};
