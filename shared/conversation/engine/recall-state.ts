import type { RecallState, State } from '../../state-machine/schemas';
import { agentAction } from './agent-actions';
import type { EngineEvent } from './contracts';
import type { TurnContext } from './turn-context';

/** A recall state: its queries are answered from what is known about the user, into working memory. */
export async function* recall(
  state: RecallState,
  turn: Pick<TurnContext, 'recall' | 'notes' | 'move'>,
): AsyncGenerator<EngineEvent, State> {
  const queries = state.queries ?? [state.requested_information ?? ''];
  yield state.queries
    ? agentAction({ type: 'navigate-state-machine-recall-state-static-queries-retrieved', static_queries: queries })
    : agentAction({
        type: 'navigate-state-machine-recall-state-dynamic-queries-generated',
        dynamic_queries: queries,
        requested_information: state.requested_information ?? '',
      });
  const answers = await turn.recall(queries);
  yield agentAction({
    type: 'navigate-state-machine-recall-state-active-memory-retrieved',
    queries_and_responses: answers,
  });
  for (const [query, response] of answers)
    turn.notes.workingMemory.push({ content: response, context: `Recalled for: ${query}` });
  return yield* turn.move(state, state.next_state);
}
