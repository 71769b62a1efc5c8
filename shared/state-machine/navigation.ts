import type { ActionState, ExitCondition, State, StateMachineVersionBody } from './schemas';

/** Both a version being created and a stored version record have this content. */
type VersionContent = StateMachineVersionBody;

export type ActionGuidance = Pick<
  ActionState,
  'intra_state_navigation_guidelines' | 'action_guidelines' | 'boundary_constraints'
>;

export const getState = (version: VersionContent, name: string): State | undefined =>
  version.states.find((state) => state.name === name);

/** The action state a session starts in. */
export const initialStateFor = (version: VersionContent, isReturningUser: boolean): ActionState => {
  const name = isReturningUser ? version.returning_user_initial_state : version.new_user_initial_state;
  const state = getState(version, name);
  // Versions are validated before they are stored, so this only happens with a corrupted record.
  if (state?.type !== 'action') {
    throw new Error(`state machine version is inconsistent: initial state '${name}' is not an action state`);
  }
  return state;
};

/**
 * The exit conditions an action or decision state is left by. Passthrough states (recall,
 * annotation, reflection, tool-call) have none: they always move on to their `next_state`.
 */
export const exitConditionsOf = (state: State): ExitCondition[] =>
  state.type === 'action' || state.type === 'decision' ? state.exit_conditions : [];

export const isTerminal = (version: VersionContent, name: string): boolean => name === version.terminal_state;

/** Global entries come first, then the state's own; an entry given in both places appears once. */
const merge = (global: string[], own: string[]): string[] => [...new Set([...global, ...own])];

/**
 * The guidelines and constraints that apply in an action state. The version stores global
 * guidance as given; it is merged into every action state only when the machine is used.
 */
export const applyGlobalGuidance = (state: ActionState, version: VersionContent): ActionGuidance => ({
  intra_state_navigation_guidelines: merge(
    version.global_intra_state_navigation_guidelines,
    state.intra_state_navigation_guidelines,
  ),
  action_guidelines: merge(version.global_action_guidelines, state.action_guidelines),
  boundary_constraints: merge(version.global_boundary_constraints, state.boundary_constraints),
});
