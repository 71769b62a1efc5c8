import type { AnnotationState, State } from '../../state-machine/schemas';
import { agentAction } from './agent-actions';
import type { EngineEvent } from './contracts';
import type { TurnContext } from './turn-context';

/** An annotation state: its inner thought becomes a thought of the turn and a working-memory entry. */
export async function* annotate(
  state: AnnotationState,
  turn: Pick<TurnContext, 'notes' | 'newId' | 'move'>,
): AsyncGenerator<EngineEvent, State> {
  yield agentAction({
    type: 'navigate-state-machine-annotation-state-annotation-retrieved',
    annotation: state.inner_thought,
  });
  turn.notes.innerThoughts.push({ id: turn.newId(), content: state.inner_thought });
  turn.notes.workingMemory.push({ content: state.inner_thought, context: `Annotation of state ${state.name}` });
  return yield* turn.move(state, state.next_state);
}
