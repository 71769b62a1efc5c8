import { listInteractions } from './interaction-repository';
import type { InteractionRecord, ToolCallLog } from './schemas';

/**
 * The tool calls a real conversation recorded, for a simulated conversation that replays it
 * (`tool_replay`): a call of the same tool with the same input answers what was recorded; any
 * other call is mocked. Nothing runs, so a replay cannot act on the world the real one acted on.
 */

/** Interactions read from the recorded conversation (`max_interactions` of a simulation is at most 100). */
const interactionsRead = 200;

/** JSON with object keys sorted: two inputs are the same input whatever their key order. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

/** Every tool call of the interactions: those of tool-call states and transitions, engage-user and select-next-action. */
export const toolCallsOf = (interaction: InteractionRecord): ToolCallLog[] => [
  ...interaction.state_transition_logs.flatMap((log) => log.tool_call_logs.flat()),
  ...interaction.engage_user_tool_call_logs.flat(),
  ...interaction.select_next_action_tool_call_logs.flat(),
];

/** A call's key: its tool and its input, whatever the key order. */
export const toolCallKey = (call: { tool_id: string; input: Record<string, unknown> }): string =>
  `${call.tool_id}:${canonical(call.input)}`;

/** What each (tool, input) answered in the conversation: the first answer of each. */
export const recordedToolCalls = async (orgId: string, conversationId: string): Promise<Map<string, ToolCallLog>> => {
  const recorded = new Map<string, ToolCallLog>();
  for (const interaction of await listInteractions(orgId, conversationId, interactionsRead)) {
    for (const call of toolCallsOf(interaction))
      if (!recorded.has(toolCallKey(call))) recorded.set(toolCallKey(call), call);
  }
  return recorded;
};

/** What a call answers in a replay that has no recorded result for it. */
export const unrecordedCallOutput =
  'MockedToolResult: the replayed conversation recorded no call of this tool with this input; the tool was not run.';
