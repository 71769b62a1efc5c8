import { initialStateFor, isTerminal } from '../../state-machine/navigation';
import type { ActionState, State, TransferInstruction } from '../../state-machine/schemas';
import { engageUser, leaveActionState } from './action-state';
import { annotate } from './annotation-state';
import type { AppliedBehavior, EngineDependencies, EngineEvent, EngineSession, TurnOutcome } from './contracts';
import { decide } from './decision-state';
import { selectDynamicBehavior } from './dynamic-behavior';
import { StateMachineInconsistentError } from './errors';
import { recall } from './recall-state';
import { reflect } from './reflection-state';
import { callDesignatedTool } from './tool-call-state';
import { createTurnContext, type TurnContext } from './turn-context';

/**
 * The conversation engine: one agent turn at a time, without HTTP, storage or Lambda types.
 *
 * A turn starts in the action state the agent was in (the initial state for a new
 * conversation). When the user said something, the state's exit conditions are weighed with
 * `chooseOption` (staying is an option); a move leads through passthrough states (decision,
 * annotation, reflection, recall, tool-call) until an action state is reached, where the agent
 * engages the user: its message is streamed piece by piece as the model writes it. Reaching
 * the terminal state completes the conversation.
 *
 * Each state type is a unit of its own (`<type>-state.ts`) that yields the stream's
 * `current-agent-action` and `new-message` events; this orchestrator strings them together
 * and returns what the turn produced, which the caller stores before reporting completion.
 * Before anything else, a dynamic behaviour may be selected for the turn (`dynamic-behavior.ts`).
 * Tools and dynamic behavior sets plug in through `EngineExtensions` (`contracts.ts`).
 */

/** Passthrough states visited in one turn before the machine is considered to loop. */
const maxHops = 25;
/** Working memory and reflections carried from turn to turn. */
const carriedEntries = 20;

const passThrough = (state: Exclude<State, ActionState>, turn: TurnContext): AsyncGenerator<EngineEvent, State> => {
  switch (state.type) {
    case 'decision':
      return decide(state, turn);
    case 'annotation':
      return annotate(state, turn);
    case 'reflection':
      return reflect(state, turn);
    case 'recall':
      return recall(state, turn);
    case 'tool-call':
      return callDesignatedTool(state, turn);
  }
};

/** A person is asked for by the state the agent engaged the user in, else by the behaviour applied. */
const escalationAsked = (state: ActionState, behavior: AppliedBehavior | null): { reason: string } | null => {
  const asked = state.escalation ?? behavior?.escalation;
  return asked ? { reason: asked.reason } : null;
};

/** A handover to a person is asked by the state the agent engaged the user in, else by the behaviour applied. */
const transferAsked = (state: ActionState, behavior: AppliedBehavior | null): TransferInstruction | null => {
  const asked = state.transfer ?? behavior?.transfer;
  return asked ? { phone_to: asked.phone_to, mode: asked.mode, summary: asked.summary ?? null } : null;
};

/** Runs one turn; see the module comment. */
export async function* runTurn(
  session: EngineSession,
  deps: EngineDependencies,
): AsyncGenerator<EngineEvent, TurnOutcome> {
  const behavior = yield* selectDynamicBehavior(session, deps);
  const turn = createTurnContext(session, deps, behavior);
  const { machine, notes } = turn;

  let state = turn.stateNamed(session.currentState || initialStateFor(machine, session.isReturningUser).name);

  // Something new was said: the agent may leave its state.
  const lastSpoken = session.history.at(-1);
  if (state.type === 'action' && lastSpoken && lastSpoken.role !== 'agent' && !isTerminal(machine, state.name)) {
    state = yield* leaveActionState(state, turn);
  }

  for (let hops = 0; state.type !== 'action'; hops += 1) {
    if (hops >= maxHops) {
      throw new StateMachineInconsistentError(`no action state was reached within ${maxHops} passthrough states.`);
    }
    state = yield* passThrough(state, turn);
  }

  const engaged = state;
  const { action, agentMessageId, agentMessage } = yield* engageUser(engaged, turn);
  return {
    state: engaged,
    action,
    agentMessageId,
    agentMessage,
    transitions: notes.transitions,
    innerThoughts: notes.innerThoughts,
    workingMemory: notes.workingMemory.slice(-carriedEntries),
    reflections: notes.reflections.slice(-carriedEntries),
    triggeredDynamicBehavior: behavior?.versionInfo ?? null,
    engageUserToolCallLogs: notes.engageUserToolCallLogs,
    selectNextActionToolCallLogs: notes.selectNextActionToolCallLogs,
    completed: isTerminal(machine, engaged.name),
    escalation: escalationAsked(engaged, behavior),
    transfer: transferAsked(engaged, behavior),
  };
}
