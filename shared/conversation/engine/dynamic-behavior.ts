import type { LlmOption } from '../../llm/provider';
import type { ActionState } from '../../state-machine/schemas';
import { agentAction } from './agent-actions';
import type {
  AppliedBehavior,
  DynamicBehaviorCandidate,
  EngineDependencies,
  EngineEvent,
  EngineSession,
  TriggeredDynamicBehavior,
} from './contracts';
import { EngineCapabilityError } from './errors';
import { llmMessagesOf } from './turn-context';

/**
 * Dynamic behavior sets. For each user message and external event, the recent messages are
 * embedded and the triggers of the active sets applied to the service are ranked by similarity
 * (`EngineExtensions.dynamicBehaviors`); the candidates above the threshold go to the model,
 * which selects at most one. The selection sticks: the previous behaviour is offered as
 * "continue", so it stays unless another fits better or none fits any more.
 *
 * The selected behaviour applies to this turn: its instructions join every prompt of the turn
 * (with `overrides_instructions`, the action state's own guidelines and constraints are dropped;
 * identity, background and the machine's global guidelines stay), and its tool call specs are
 * added to or replace the action state's (`withDynamicBehavior`).
 */

/** The user's and external events' messages since the agent last spoke; undefined when there are none. */
const recentMessages = (session: EngineSession): string | undefined => {
  const recent: string[] = [];
  for (let index = session.history.length - 1; index >= 0; index -= 1) {
    const entry = session.history[index];
    if (!entry || entry.role === 'agent') break;
    recent.unshift(entry.text);
  }
  return recent.length === 0 ? undefined : recent.join('\n');
};

const noneOption: LlmOption = { id: 'none', description: 'Nothing listed fits.' };

const selectionPrompt = (previous: TriggeredDynamicBehavior | null): string =>
  [
    'You select the dynamic behavior the agent follows for its next reply. Each option lists the situations ' +
      '(triggers) in which a behavior applies. Pick the one whose triggers the latest messages of the conversation ' +
      'meet best, or "none" when no trigger is met.',
    previous
      ? 'A behavior is already selected (the option that says so): keep it unless another fits better or it no longer fits.'
      : 'No behavior is selected yet.',
  ].join('\n\n');

const optionOf = (
  candidate: DynamicBehaviorCandidate,
  index: number,
  previous: TriggeredDynamicBehavior | null,
): LlmOption => {
  const triggers = candidate.triggers.join('; ');
  return {
    id: `behavior-${index}`,
    description:
      previous?.[0] === candidate.versionInfo[0]
        ? `Continue the behavior already selected, for: ${triggers}`
        : triggers,
  };
};

const appliedBehaviorOf = (candidate: DynamicBehaviorCandidate): AppliedBehavior => {
  const instructions = candidate.actions.flatMap((action) => (action.type === 'inject-instruction' ? [action] : []));
  const toolChanges = candidate.actions.flatMap((action) => (action.type === 'change-tool-candidates' ? [action] : []));
  const escalation = instructions.find((action) => action.escalation)?.escalation;
  const transfer = instructions.find((action) => action.transfer)?.transfer;
  return {
    versionInfo: candidate.versionInfo,
    ...(escalation ? { escalation: { reason: escalation.reason } } : {}),
    ...(transfer ? { transfer } : {}),
    instruction: instructions.length === 0 ? undefined : instructions.map((action) => action.instruction).join('\n'),
    overridesInstructions: instructions.some((action) => action.overrides_instructions),
    toolCallSpecs:
      toolChanges.length === 0
        ? undefined
        : {
            specs: toolChanges.flatMap((action) => action.tool_call_specs),
            overridesExisting: toolChanges.some((action) => action.overrides_existing_tool_call_specs),
          },
  };
};

/**
 * Selects this turn's dynamic behaviour (see the module comment), yielding the reference's
 * `select-dynamic-behavior-*` steps; null when none applies or the turn has nothing new to match.
 */
export async function* selectDynamicBehavior(
  session: EngineSession,
  deps: EngineDependencies,
): AsyncGenerator<EngineEvent, AppliedBehavior | null> {
  const source = deps.dynamicBehaviors;
  const recent = recentMessages(session);
  if (!source || recent === undefined) return null;
  const previous = session.previousDynamicBehavior;

  const vector = await source.embed(recent);
  yield agentAction({ type: 'select-dynamic-behavior-vector-generated' });
  const candidates = await source.rank(vector, previous);
  yield agentAction({ type: 'select-dynamic-behavior-relevance-retrieval-completed' });

  let selected: DynamicBehaviorCandidate | undefined;
  if (candidates.length > 0) {
    const options = candidates.map((candidate, index) => optionOf(candidate, index, previous));
    const { provider, ...settings } = deps.model('select_dynamic_behavior');
    const choice = await provider.chooseOption({
      ...settings,
      system: selectionPrompt(previous),
      messages: llmMessagesOf(session.history),
      // "none" first: a model that finds no fit falls back to it.
      options: [noneOption, ...options],
      signal: deps.signal,
    });
    selected = candidates[options.findIndex((option) => option.id === choice.id)];
  }
  yield agentAction({
    type: 'select-dynamic-behavior-completed',
    selected_dynamic_behavior_set_version_info: selected?.versionInfo ?? null,
    previous_selected_dynamic_behavior_set_version_info: previous,
  });
  if (!selected) return null;
  const applied = appliedBehaviorOf(selected);
  if (applied.toolCallSpecs && applied.toolCallSpecs.specs.length > 0 && !deps.callTool) {
    throw new EngineCapabilityError(
      `Dynamic behavior set ${applied.versionInfo[0]} (version ${applied.versionInfo[1]}) changes the tool candidates; tool calls are not supported yet.`,
    );
  }
  return applied;
}

/**
 * An action state as the applied behaviour shapes it: with `overrides_instructions`, without its
 * own guidelines and constraints (the machine's global ones are merged later, as always); with
 * tool call specs, offering them in addition to (or instead of) its own action tool calls.
 */
export const withDynamicBehavior = (state: ActionState, behavior: AppliedBehavior | null): ActionState => {
  if (!behavior) return state;
  const tools = behavior.toolCallSpecs;
  return {
    ...state,
    ...(behavior.overridesInstructions
      ? { action_guidelines: [], intra_state_navigation_guidelines: [], boundary_constraints: [] }
      : {}),
    ...(tools
      ? {
          action_tool_call_specs: tools.overridesExisting
            ? tools.specs
            : [...state.action_tool_call_specs, ...tools.specs],
        }
      : {}),
  };
};

/** The reference's `*-dynamic-behavior-override` step, reported where the behaviour shapes a decision or a reply. */
export const behaviorOverrideAction = (
  type: 'engage-user-dynamic-behavior-override' | 'navigate-state-machine-dynamic-behavior-override',
  behavior: AppliedBehavior,
) =>
  agentAction({
    type,
    overriding_instructions: behavior.overridesInstructions,
    overriding_tool_candidates: behavior.toolCallSpecs?.overridesExisting ?? false,
  });
