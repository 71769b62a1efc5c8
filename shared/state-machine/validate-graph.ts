import { isValidVersionConstraint } from '../tool/version-constraint';
import type { NextState, State, StateMachineVersionBody, ToolCallSpec } from './schemas';

export type ProblemLocation = (string | number)[];

export type GraphProblemType =
  | 'duplicate_state_name'
  | 'unknown_state'
  | 'not_an_action_state'
  | 'self_transition'
  | 'unknown_reference'
  | 'unknown_external_state'
  /** The reference answers this one with 400 rather than 422. */
  | 'referenced_machine_not_found'
  | 'terminal_state_has_exit_conditions'
  | 'terminal_state_action_count'
  | 'terminal_state_escalates'
  | 'terminal_state_transfers'
  | 'decision_without_exit_conditions'
  | 'recall_source'
  | 'invalid_version_constraint';

/** One problem, shaped like an entry of a 422 response's `detail`. */
export interface GraphProblem {
  loc: ProblemLocation;
  msg: string;
  type: GraphProblemType;
}

/**
 * Returns the state names of version `version` of machine `machineId`, or undefined when that
 * machine or version does not exist or the machine is deprecated. It is synchronous on purpose:
 * `references` lists every machine a version may point at, so the caller loads them up front.
 */
export type ReferencedMachineResolver = (machineId: string, version: number) => readonly string[] | undefined;

/** A field of a state that names another state, with its location inside the state. */
interface Transition {
  target: NextState;
  path: ProblemLocation;
  label: string;
}

interface LocatedToolCallSpec {
  spec: ToolCallSpec;
  path: ProblemLocation;
  label: string;
}

const transitionsOf = (state: State): Transition[] => {
  if (state.type === 'action' || state.type === 'decision') {
    return state.exit_conditions.map((condition, index) => ({
      target: condition.next_state,
      path: ['exit_conditions', index, 'next_state'],
      label: `exit condition ${index}`,
    }));
  }
  return [{ target: state.next_state, path: ['next_state'], label: 'next_state' }];
};

const toolCallSpecsOf = (state: State): LocatedToolCallSpec[] => {
  const listed = (field: string, specs: ToolCallSpec[]): LocatedToolCallSpec[] =>
    specs.map((spec, index) => ({ spec, path: [field, index], label: `${field} entry ${index}` }));
  switch (state.type) {
    case 'action':
      return [
        ...listed('action_tool_call_specs', state.action_tool_call_specs),
        ...listed('exit_condition_tool_call_specs', state.exit_condition_tool_call_specs),
      ];
    case 'tool-call':
      return [
        { spec: state.designated_tool, path: ['designated_tool'], label: 'designated_tool' },
        ...listed('tool_call_specs', state.tool_call_specs),
      ];
    case 'decision':
    case 'reflection':
      return listed('tool_call_specs', state.tool_call_specs);
    case 'recall':
    case 'annotation':
      return [];
  }
};

/**
 * Checks the rules of a state machine version that span fields or states, before it is stored.
 * Field-level rules (name patterns, the tool id pattern, list bounds, non-empty text) belong to
 * `stateMachineVersionBody`, which must have parsed the body first.
 *
 * States unreachable from the initial states are deliberately not reported: the reference's
 * list of version constraints does not include reachability, so it accepts such versions.
 *
 * States are located by name (`['body', 'states', 'greet', ...]`), except for a duplicate name,
 * which does not identify one state and is located by position.
 */
export const validateStateMachineGraph = (
  version: StateMachineVersionBody,
  resolveReferencedMachine?: ReferencedMachineResolver,
): GraphProblem[] => {
  const problems: GraphProblem[] = [];
  const report = (loc: ProblemLocation, type: GraphProblemType, msg: string) => problems.push({ loc, msg, type });

  const statesByName = new Map<string, State>();
  version.states.forEach((state, index) => {
    if (statesByName.has(state.name)) {
      report(
        ['body', 'states', index, 'name'],
        'duplicate_state_name',
        `State ${index} is named '${state.name}', but an earlier state already has that name; state names must be unique.`,
      );
    } else {
      statesByName.set(state.name, state);
    }
  });

  for (const field of ['new_user_initial_state', 'returning_user_initial_state', 'terminal_state'] as const) {
    const name = version[field];
    const named = statesByName.get(name);
    if (named === undefined) {
      report(['body', field], 'unknown_state', `${field} is '${name}', but this machine has no state with that name.`);
    } else if (named.type !== 'action') {
      report(
        ['body', field],
        'not_an_action_state',
        `${field} is '${name}', which is a ${named.type} state; it must be an action state.`,
      );
    }
  }

  const terminal = statesByName.get(version.terminal_state);
  if (terminal?.type === 'action') {
    if (terminal.exit_conditions.length > 0) {
      report(
        ['body', 'states', terminal.name, 'exit_conditions'],
        'terminal_state_has_exit_conditions',
        `State '${terminal.name}' is the terminal state, so it must not have exit conditions, but it has ${terminal.exit_conditions.length}.`,
      );
    }
    if (terminal.actions.length !== 1) {
      report(
        ['body', 'states', terminal.name, 'actions'],
        'terminal_state_action_count',
        `State '${terminal.name}' is the terminal state, so it must have exactly one action, but it has ${terminal.actions.length}.`,
      );
    }
    // Reaching it finishes the conversation: no operator could take it over, no call be handed over.
    if (terminal.escalation) {
      report(
        ['body', 'states', terminal.name, 'escalation'],
        'terminal_state_escalates',
        `State '${terminal.name}' is the terminal state, which ends the conversation, so it cannot escalate to an operator.`,
      );
    }
    if (terminal.transfer) {
      report(
        ['body', 'states', terminal.name, 'transfer'],
        'terminal_state_transfers',
        `State '${terminal.name}' is the terminal state, which ends the conversation, so it cannot hand over to a person.`,
      );
    }
  }

  // State names of each referenced machine, when a resolver is given and the machine exists.
  const referencedStateNames = new Map<string, ReadonlySet<string>>();
  if (resolveReferencedMachine !== undefined) {
    for (const [referenceName, [machineId, machineVersion]] of Object.entries(version.references)) {
      const stateNames = resolveReferencedMachine(machineId, machineVersion);
      if (stateNames === undefined) {
        report(
          ['body', 'references', referenceName],
          'referenced_machine_not_found',
          `Reference '${referenceName}' points at version ${machineVersion} of state machine ${machineId}, which does not exist or is deprecated.`,
        );
      } else {
        referencedStateNames.set(referenceName, new Set(stateNames));
      }
    }
  }

  for (const state of version.states) {
    const statePath: ProblemLocation = ['body', 'states', state.name];

    for (const { target, path, label } of transitionsOf(state)) {
      const loc = [...statePath, ...path];
      if (typeof target === 'string') {
        if (target === state.name) {
          report(
            loc,
            'self_transition',
            `State '${state.name}': ${label} leads back to the state itself; it must lead to a different state.`,
          );
        } else if (!statesByName.has(target)) {
          report(
            loc,
            'unknown_state',
            `State '${state.name}': ${label} leads to '${target}', but this machine has no state with that name.`,
          );
        }
        continue;
      }

      const [externalState, jumpbackState] = target;
      const [referenceName = '', externalStateName = ''] = externalState.split('.');
      const externalStateNames = referencedStateNames.get(referenceName);
      if (!Object.hasOwn(version.references, referenceName)) {
        report(
          [...loc, 0],
          'unknown_reference',
          `State '${state.name}': ${label} leads to '${externalState}', but '${referenceName}' is not listed in references.`,
        );
      } else if (externalStateNames !== undefined && !externalStateNames.has(externalStateName)) {
        report(
          [...loc, 0],
          'unknown_external_state',
          `State '${state.name}': ${label} leads to '${externalState}', but the machine referenced as '${referenceName}' has no state named '${externalStateName}'.`,
        );
      }
      if (!statesByName.has(jumpbackState)) {
        report(
          [...loc, 1],
          'unknown_state',
          `State '${state.name}': ${label} returns to '${jumpbackState}' after the referenced machine ends, but this machine has no state with that name.`,
        );
      }
    }

    if (state.type === 'decision' && state.exit_conditions.length === 0) {
      report(
        [...statePath, 'exit_conditions'],
        'decision_without_exit_conditions',
        `Decision state '${state.name}' has no exit conditions; it needs at least one to choose the next state.`,
      );
    }

    // A recall needs exactly one source of queries: the reference forbids setting both, and with neither there is nothing to recall.
    if (state.type === 'recall' && (state.queries === null) === (state.requested_information === null)) {
      const which =
        state.queries === null ? 'neither queries nor requested_information' : 'both queries and requested_information';
      report(
        [...statePath, 'queries'],
        'recall_source',
        `Recall state '${state.name}' sets ${which}; exactly one of them must be set.`,
      );
    }

    for (const { spec, path, label } of toolCallSpecsOf(state)) {
      if (!isValidVersionConstraint(spec.version_constraint)) {
        report(
          [...statePath, ...path, 'version_constraint'],
          'invalid_version_constraint',
          `State '${state.name}': the version_constraint '${spec.version_constraint}' of ${label} is not a valid version constraint; use Python packaging syntax such as '>=1.2,<2'.`,
        );
      }
    }
  }

  return problems;
};
