import type { LlmOption } from '../../llm/provider';
import { applyGlobalGuidance } from '../../state-machine/navigation';
import type { ActionState, State } from '../../state-machine/schemas';
import { agentAction } from './agent-actions';
import type { EngineEvent } from './contracts';
import { behaviorOverrideAction, withDynamicBehavior } from './dynamic-behavior';
import { offerTools, type ToolTurn, withToolResults } from './tool-call-state';
import type { TurnContext } from './turn-context';

/** Action states: where the agent engages the user, and which the user's words may make it leave. */

const stayOption: LlmOption = {
  id: 'stay',
  description: 'Remain in the current state: none of the other options applies yet.',
};

type PromptingTurn = Pick<TurnContext, 'machine' | 'prompt' | 'dynamicBehavior'>;

const actionPrompt = (turn: PromptingTurn, state: ActionState, actions: string[]): string => {
  const guidance = applyGlobalGuidance(withDynamicBehavior(state, turn.dynamicBehavior), turn.machine);
  return turn.prompt({
    name: state.name,
    objective: state.objective,
    actions,
    intraStateNavigationGuidelines: guidance.intra_state_navigation_guidelines,
    actionGuidelines: guidance.action_guidelines,
    boundaryConstraints: guidance.boundary_constraints,
  });
};

/**
 * Something new was said: the model weighs the state's exit conditions, staying being an
 * option. Returns the state the agent moved to, or the same state.
 */
export async function* leaveActionState(
  state: ActionState,
  turn: Pick<TurnContext, 'machine' | 'prompt' | 'dynamicBehavior' | 'choose' | 'move' | 'exitSelected'> & ToolTurn,
): AsyncGenerator<EngineEvent, State> {
  const exits = state.exit_conditions;
  if (exits.length === 0) return state;
  if (turn.dynamicBehavior)
    yield behaviorOverrideAction('navigate-state-machine-dynamic-behavior-override', turn.dynamicBehavior);
  const options = exits.map((exit, index) => ({ id: `exit-${index}`, description: exit.description }));
  const system = actionPrompt(turn, state, state.actions);
  const round = yield* offerTools(
    state,
    state.exit_condition_tool_call_specs,
    system,
    'select_next_action',
    'state-transition',
    turn,
  );
  const chosen = await turn.choose(withToolResults(system, round), [...options, stayOption]);
  const exit = exits[options.findIndex((option) => option.id === chosen)];
  if (!exit) return state;
  yield turn.exitSelected(exit.description, exit.next_state);
  return yield* turn.move(state, exit.next_state, {
    previous_state_exit_condition_description: exit.description,
    tool_call_logs: round.logs.length > 0 ? [round.logs] : [],
  });
}

const selectAction = async (state: ActionState, turn: PromptingTurn & Pick<TurnContext, 'choose'>): Promise<string> => {
  if (state.actions.length <= 1) return state.actions[0] ?? '';
  const options = state.actions.map((text, index) => ({ id: `action-${index}`, description: text }));
  const chosen = await turn.choose(actionPrompt(turn, state, state.actions), options);
  return state.actions[options.findIndex((option) => option.id === chosen)] ?? (state.actions[0] as string);
};

export interface Engagement {
  action: string;
  agentMessageId: string;
  agentMessage: string;
}

/** Engages the user: picks one of the state's actions and streams the agent's message as the model writes it. */
export async function* engageUser(
  state: ActionState,
  turn: PromptingTurn & Pick<TurnContext, 'choose' | 'write' | 'newId'> & ToolTurn,
): AsyncGenerator<EngineEvent, Engagement> {
  const action = await selectAction(state, turn);
  yield agentAction({ type: 'navigate-state-machine-action-state-action-selected', action });
  if (turn.dynamicBehavior) yield behaviorOverrideAction('engage-user-dynamic-behavior-override', turn.dynamicBehavior);

  const actionSystem = actionPrompt(turn, state, action === '' ? [] : [action]);
  // A dynamic behavior's change-tool-candidates adds to (or replaces) the state's own tool call specs.
  const offered = withDynamicBehavior(state, turn.dynamicBehavior).action_tool_call_specs;
  const round = yield* offerTools(state, offered, actionSystem, 'engage_user', 'engage-user', turn);
  const system = withToolResults(actionSystem, round);
  // Made now, after any inner thought of this turn, so the agent message sorts after them.
  const agentMessageId = turn.newId();
  let agentMessage = '';
  let sequence = 0;
  for await (const fragment of turn.write('engage_user', system)) {
    if (fragment === '') continue;
    agentMessage += fragment;
    yield {
      type: 'new-message',
      message: fragment,
      transcript_alignment: null,
      stop: false,
      sequence_number: sequence,
      message_id: agentMessageId,
    };
    sequence += 1;
  }
  // The last piece is only known once the model has finished, so an empty piece closes the message.
  yield {
    type: 'new-message',
    message: '',
    transcript_alignment: null,
    stop: true,
    sequence_number: sequence,
    message_id: agentMessageId,
  };
  return { action, agentMessageId, agentMessage };
}
