import type { DecisionState, State } from '../../state-machine/schemas';
import { agentAction } from './agent-actions';
import type { EngineEvent } from './contracts';
import { StateMachineInconsistentError } from './errors';
import { offerTools, type ToolTurn, withToolResults } from './tool-call-state';
import type { TurnContext } from './turn-context';

/** A decision state: the model picks one of its exit conditions, one of which always applies. */
export async function* decide(
  state: DecisionState,
  turn: Pick<TurnContext, 'prompt' | 'choose' | 'move' | 'exitSelected'> & ToolTurn,
): AsyncGenerator<EngineEvent, State> {
  yield agentAction({ type: 'navigate-state-machine-decision-state-decision-started' });
  const exits = state.exit_conditions;
  const options = exits.map((exit, index) => ({ id: `exit-${index}`, description: exit.description }));
  const system = turn.prompt({
    name: state.name,
    objective: state.objective,
    actions: [],
    intraStateNavigationGuidelines: state.decision_guidelines,
    actionGuidelines: [],
    boundaryConstraints: [],
  });
  const round = yield* offerTools(state, state.tool_call_specs, system, 'select_next_action', 'state-transition', turn);
  const chosen = await turn.choose(withToolResults(system, round), options);
  const exit = exits[options.findIndex((option) => option.id === chosen)];
  if (!exit) throw new StateMachineInconsistentError(`decision state '${state.name}' has no exit condition.`);
  yield turn.exitSelected(exit.description, exit.next_state);
  return yield* turn.move(state, exit.next_state, {
    previous_state_exit_condition_description: exit.description,
    tool_call_logs: round.logs.length > 0 ? [round.logs] : [],
  });
}
