import type { ValidationIssue } from '../kernel/errors';
import { isUsableTool } from '../tool/usable-tools';
import type { State, StateMachineVersionBody, ToolCallSpec } from './schemas';

/** The tool call specs of a state, each with the field that holds it. */
const specsOf = (state: State): { field: string; index?: number; spec: ToolCallSpec }[] => {
  const listed = (field: string, specs: ToolCallSpec[]) => specs.map((spec, index) => ({ field, index, spec }));
  switch (state.type) {
    case 'action':
      return [
        ...listed('action_tool_call_specs', state.action_tool_call_specs),
        ...listed('exit_condition_tool_call_specs', state.exit_condition_tool_call_specs),
      ];
    case 'decision':
    case 'reflection':
      return listed('tool_call_specs', state.tool_call_specs);
    case 'tool-call':
      return [
        { field: 'designated_tool', spec: state.designated_tool },
        ...listed('tool_call_specs', state.tool_call_specs),
      ];
    default:
      return [];
  }
};

/**
 * What is wrong with a state machine version's tool references: a tool that does not exist in
 * the organization (or is deprecated), and a designated tool whose result is not `persisted`
 * (a tool-call state's result must outlive the call). Each problem names its state.
 */
export const toolReferenceProblems = async (
  orgId: string,
  body: StateMachineVersionBody,
): Promise<ValidationIssue[]> => {
  const problems: ValidationIssue[] = [];
  const known = new Map<string, boolean>();
  for (const [stateIndex, state] of body.states.entries()) {
    for (const { field, index, spec } of specsOf(state)) {
      const loc = ['body', 'states', stateIndex, field, ...(index === undefined ? [] : [index]), 'tool_id'];
      if (!known.has(spec.tool_id)) {
        known.set(spec.tool_id, await isUsableTool(orgId, spec.tool_id));
      }
      if (!known.get(spec.tool_id)) {
        problems.push({
          loc,
          msg: `State '${state.name}' references tool ${spec.tool_id}, which does not exist or is deprecated.`,
          type: 'tool_not_found',
        });
      }
      if (field === 'designated_tool' && spec.result_persistence !== 'persisted') {
        problems.push({
          loc: ['body', 'states', stateIndex, field, 'result_persistence'],
          msg: `State '${state.name}' designates a tool whose result_persistence is not 'persisted'.`,
          type: 'value_error',
        });
      }
    }
  }
  return problems;
};
