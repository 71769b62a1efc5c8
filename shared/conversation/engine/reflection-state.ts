import type { ReflectionState, State } from '../../state-machine/schemas';
import { agentAction } from './agent-actions';
import type { EngineEvent } from './contracts';
import { offerTools, type ToolRound, type ToolTurn, withToolResults } from './tool-call-state';
import type { TurnContext } from './turn-context';

type ReflectionTurn = Pick<TurnContext, 'prompt' | 'write' | 'notes' | 'newId' | 'move'> & ToolTurn;

/** The model's private note on the problem, cut to the word limit. */
const reflectionPrompt = (problem: string, wordLimit: number, turn: ReflectionTurn): string =>
  turn.prompt({
    name: 'reflection',
    objective: problem,
    actions: [`Reflect on the objective in at most ${wordLimit} words, as a private note to yourself.`],
    intraStateNavigationGuidelines: [],
    actionGuidelines: [],
    boundaryConstraints: [],
  });

const reflectOn = async (system: string, wordLimit: number, turn: ReflectionTurn): Promise<string> => {
  let text = '';
  for await (const fragment of turn.write('generate_reflection', system)) text += fragment;
  return text.trim().split(/\s+/).slice(0, wordLimit).join(' ');
};

/** A reflection state: the reflection becomes a thought of the turn and is carried to the next turns. */
export async function* reflect(state: ReflectionState, turn: ReflectionTurn): AsyncGenerator<EngineEvent, State> {
  yield agentAction({ type: 'navigate-state-machine-reflection-state-prompt-retrieved', prompt: state.problem });
  const system = reflectionPrompt(state.problem, state.word_limit, turn);
  const round: ToolRound = yield* offerTools(
    state,
    state.tool_call_specs,
    system,
    'generate_reflection',
    'state-transition',
    turn,
  );
  const reflection = await reflectOn(withToolResults(system, round), state.word_limit, turn);
  yield agentAction({ type: 'navigate-state-machine-reflection-state-reflection-generated', reflection });
  const thought = { id: turn.newId(), content: reflection };
  turn.notes.innerThoughts.push(thought);
  turn.notes.reflections.push({ message_id: thought.id, content: reflection });
  return yield* turn.move(state, state.next_state, {
    inner_thought_message_id: thought.id,
    tool_call_logs: round.logs.length > 0 ? [round.logs] : [],
  });
}
