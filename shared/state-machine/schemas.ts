import { z } from 'zod';
import {
  creatorInfo,
  e164Number,
  objectId,
  pagedResponse,
  strippedText,
  timestamp,
  transferModes,
} from '../kernel/schemas';

/** Internal state names and reference names. A dot would make them ambiguous with external state names. */
const stateOrRefName = z.string().regex(/^[A-Za-z0-9_]+$/, 'must contain only letters, digits and underscores');

/**
 * The reference validates request bodies strictly but describes stored records with plain
 * types. One builder produces both shapes so they cannot drift apart; only these rules differ.
 */
interface FieldRules {
  text: z.ZodString;
  stateName: z.ZodString;
  externalStateName: z.ZodString;
  recordId: z.ZodString;
  actions: z.ZodArray<z.ZodString>;
  audioFillers: z.ZodArray<z.ZodString>;
  audioFillerDelay: z.ZodNumber;
  wordLimit: z.ZodNumber;
  recallQueries: z.ZodArray<z.ZodString>;
  phoneNumber: z.ZodString;
}

const requestRules: FieldRules = {
  text: strippedText,
  stateName: stateOrRefName,
  externalStateName: z
    .string()
    .regex(/^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$/, 'must have the form {reference_name}.{state_name}'),
  recordId: objectId,
  actions: z.array(strippedText).min(1),
  audioFillers: z.array(strippedText).max(5),
  audioFillerDelay: z.number().gt(0).lte(10),
  wordLimit: z.number().int().gt(0),
  recallQueries: z.array(z.string()).min(1),
  phoneNumber: e164Number,
};

const recordRules: FieldRules = {
  text: z.string(),
  stateName: z.string(),
  externalStateName: z.string(),
  recordId: z.string(),
  actions: z.array(z.string()),
  audioFillers: z.array(z.string()),
  audioFillerDelay: z.number(),
  wordLimit: z.number().int(),
  recallQueries: z.array(z.string()),
  phoneNumber: z.string(),
};

/**
 * A handover to a person (a platform extension): an action state's or a dynamic behavior's
 * `transfer`. In a phone call the call is handed to `phone_to`; elsewhere the conversation is
 * escalated to an operator (docs/handover.md).
 */
const buildTransferInstruction = (phoneNumber: z.ZodString, text: z.ZodString) =>
  z.object({
    phone_to: phoneNumber.describe('The person to hand the call to, in E.164 form.'),
    mode: z
      .enum(transferModes)
      .describe('cold: the caller is connected at once; warm: the person first hears a summary of the conversation.'),
    summary: text
      .nullish()
      .describe('What a warm transfer tells the person first; made from the conversation when absent.'),
  });

export const transferInstructionInput = buildTransferInstruction(e164Number, strippedText.max(1000));
export const transferInstructionRecord = buildTransferInstruction(z.string(), z.string());
export type TransferInstruction = z.infer<typeof transferInstructionRecord>;

const buildStateMachineSchemas = (rules: FieldRules) => {
  const textList = z.array(rules.text);
  const stateName = rules.stateName.describe('The name of this state.');
  const objective = rules.text.describe('The objective that the agent works towards when in this state.');
  const audioFillerDelay = rules.audioFillerDelay.describe(
    'The number of seconds to wait before playing an audio filler.',
  );

  const nextState = z
    .union([rules.stateName, z.tuple([rules.externalStateName, rules.stateName])])
    .describe(
      'A state of this machine, or a pair [`{reference_name}.{state_name}`, jumpback state]: the first names a state of a ' +
        'referenced machine to move to, the second a state of this machine to return to once that machine reaches its terminal state.',
    );

  const exitCondition = z.object({
    description: rules.text.describe('A description of this exit condition.'),
    next_state: nextState,
  });

  const toolCallSpec = z
    .object({
      tool_id: rules.recordId.describe('The ID of the tool.'),
      version_constraint: z
        .string()
        .describe('A Python packaging version constraint of the tool (PEP 440 version specifiers), e.g. `>=1.2,<2`.'),
      additional_instruction: rules.text.describe(
        "Additional instruction to be supplied to the LLM in addition to the tool's description.",
      ),
      audio_fillers: rules.audioFillers.describe(
        'A list of audio fillers to play in audio mode if the tool is taking a long time.',
      ),
      audio_filler_triggered_after: audioFillerDelay,
      result_persistence: z
        .enum(['ephemeral', 'persisted-preferred', 'persisted'])
        .describe(
          'ephemeral: the result is shown only to the current LLM interaction. persisted-preferred: the result stays in ' +
            'all future interactions if under 5000 characters, otherwise only the current one. persisted: the result stays ' +
            'in all future interactions, and a result over 5000 characters is an error.',
        ),
    })
    .describe('A description of a tool call that the agent can make in this state.');

  const toolCallSpecs = z.array(toolCallSpec);
  const stateToolCallSpecs = toolCallSpecs.describe('Tool calls the agent can make in this state.');
  const exitConditions = z
    .array(exitCondition)
    .describe('Under which conditions the session may move to another state, and to which one.');

  const actionState = z
    .object({
      type: z.literal('action'),
      name: stateName,
      objective,
      actions: rules.actions.describe('The specific actions that the agent performs in this state.'),
      intra_state_navigation_guidelines: textList.describe(
        'Guidelines for how the agent navigates between subgoals and exit conditions within this state.',
      ),
      action_guidelines: textList.describe('Guidelines for how the agent behaves when engaging with the user.'),
      boundary_constraints: textList.describe(
        'Guidelines for how the agent must not behave when engaging with the user.',
      ),
      exit_conditions: exitConditions,
      action_tool_call_specs: toolCallSpecs.describe(
        'Tool calls the agent can make in this state when executing an action.',
      ),
      exit_condition_tool_call_specs: toolCallSpecs.describe(
        'Tool calls the agent can make in this state when evaluating exit conditions.',
      ),
      skip_active_memory_retrieval: z
        .boolean()
        .describe(
          'If true, the agent does not perform active memory retrieval at the start of an interaction in this state.',
        ),
      escalation: z
        .object({ reason: rules.text.describe('Why a person is needed; shown to operators.') })
        .nullish()
        .describe(
          'A platform extension: when the agent engages the user in this state, the conversation is escalated to an operator (it joins their queue) with this reason. Not on the terminal state.',
        ),
      transfer: buildTransferInstruction(rules.phoneNumber, rules.text)
        .nullish()
        .describe(
          'A platform extension: when the agent engages the user in this state, it hands them to a person. In a phone call, once its words are spoken the call is transferred to phone_to (cold or warm) and the conversation finishes as transferred; in any other conversation it is escalated to an operator. Not on the terminal state.',
        ),
    })
    .describe(
      'A state with an objective and actions the agent performs towards it. The session stays here until one of the exit conditions is met.',
    );

  const decisionState = z
    .object({
      type: z.literal('decision'),
      name: stateName,
      exit_conditions: exitConditions,
      decision_guidelines: textList.describe('Guidelines the agent follows when making the decision in this state.'),
      objective,
      tool_call_specs: stateToolCallSpecs,
      audio_fillers: rules.audioFillers.describe(
        'Audio fillers to play in audio mode if selecting the next state is taking too long.',
      ),
      audio_filler_triggered_after: audioFillerDelay,
    })
    .describe(
      'A passthrough state in which the agent picks the exit condition the session satisfies and moves to its next state.',
    );

  const recallState = z
    .object({
      type: z.literal('recall'),
      name: stateName,
      queries: rules.recallQueries
        .nullable()
        .describe('Queries to perform active memory extraction for. If set, `requested_information` must be null.'),
      requested_information: rules.text
        .nullable()
        .describe(
          'A request from which active memory queries are generated and then extracted. If set, `queries` must be null.',
        ),
      next_state: nextState,
    })
    .describe('A passthrough state that adds active memory extraction results to the working memory before moving on.');

  const annotationState = z
    .object({
      type: z.literal('annotation'),
      name: stateName,
      inner_thought: rules.text.describe('The inner thought to add to the conversation.'),
      next_state: nextState,
    })
    .describe('A passthrough state in which the agent adds a pre-determined inner thought message before continuing.');

  const reflectionState = z
    .object({
      type: z.literal('reflection'),
      name: stateName,
      problem: rules.text.describe('The problem to reflect upon.'),
      word_limit: rules.wordLimit.describe('The word limit for the generated inner thought message.'),
      next_state: nextState,
      tool_call_specs: stateToolCallSpecs,
      audio_fillers: rules.audioFillers.describe(
        'Audio fillers to play in audio mode if the reflection is taking too long to be generated.',
      ),
      audio_filler_triggered_after: audioFillerDelay,
    })
    .describe(
      'A passthrough state in which the agent reflects on the conversation so far and adds an inner thought message before continuing.',
    );

  const toolCallState = z
    .object({
      type: z.literal('tool-call'),
      name: stateName,
      next_state: nextState,
      designated_tool: toolCallSpec.describe('The tool that the agent calls in this state.'),
      designated_tool_call_params_generation_audio_fillers: rules.audioFillers.describe(
        "Audio fillers to play in audio mode if generating the designated tool call's input is taking a long time.",
      ),
      designated_tool_call_params_generation_audio_filler_triggered_after: rules.audioFillerDelay.describe(
        'The number of seconds after input generation starts before an audio filler is played.',
      ),
      designated_tool_call_objective: rules.text.describe(
        'What the agent aims for when generating the input to the designated tool.',
      ),
      designated_tool_call_context: rules.text.describe(
        'Context the agent can use when generating the input to the designated tool.',
      ),
      designated_tool_call_guidances: textList.describe(
        'Suggestions the agent follows when generating the input to the designated tool.',
      ),
      designated_tool_call_validations: textList.describe(
        'Strict requirements the input to the designated tool must satisfy before the call is made.',
      ),
      tool_call_specs: toolCallSpecs.describe(
        'Tool calls the agent can make to help generating the input to the designated tool.',
      ),
    })
    .describe('A state that executes a tool call.');

  const state = z.discriminatedUnion('type', [
    actionState,
    decisionState,
    recallState,
    annotationState,
    reflectionState,
    toolCallState,
  ]);

  const versionContent = z.object({
    description: rules.text.describe('A description of the service hierarchical state machine.'),
    states: z.array(state).describe('The internal states in this service hierarchical state machine.'),
    new_user_initial_state: rules.stateName.describe(
      'The state a new user will be in when a session starts. This must be an action state of this machine.',
    ),
    returning_user_initial_state: rules.stateName.describe(
      'The state a returning user will be in when a session starts. This must be an action state of this machine.',
    ),
    terminal_state: rules.stateName.describe(
      'The state the user will be in when the session ends. This must be an action state of this machine.',
    ),
    references: z
      .record(rules.stateName, z.tuple([rules.recordId, z.number().int()]))
      .describe(
        'Other service hierarchical state machines this one refers to: a map of the reference name to the machine ID and its version number.',
      ),
    global_intra_state_navigation_guidelines: textList.describe(
      'Applied to the `intra_state_navigation_guidelines` of every action state.',
    ),
    global_action_guidelines: textList.describe('Applied to the `action_guidelines` of every action state.'),
    global_boundary_constraints: textList.describe('Applied to the `boundary_constraints` of every action state.'),
  });

  return {
    nextState,
    exitCondition,
    toolCallSpec,
    actionState,
    decisionState,
    recallState,
    annotationState,
    reflectionState,
    toolCallState,
    state,
    versionContent,
  };
};

const requestSchemas = buildStateMachineSchemas(requestRules);
const recordSchemas = buildStateMachineSchemas(recordRules);

/** A tool call spec as requests give it and as records show it (dynamic behavior sets reuse both). */
export const toolCallSpecInput = requestSchemas.toolCallSpec;
export const toolCallSpecRecord = recordSchemas.toolCallSpec;

/** Body of `POST .../service_hierarchical_state_machine/{service_hierarchical_state_machine_id}/`. */
export const stateMachineVersionBody = requestSchemas.versionContent;

export const createStateMachineRequest = z.object({
  state_machine_name: strippedText.max(256).describe('The name of the new state machine.'),
});

export const createStateMachineResponse = z.object({
  id: z.string().describe('The ID of the newly created state machine.'),
});

/** A state machine as listed by `GET .../service_hierarchical_state_machine`. */
export const stateMachineRecord = z.object({
  id: z.string().describe('The ID of the state machine.'),
  name: z.string().describe('The name of the state machine.'),
  deprecated: z.boolean().describe('Whether the state machine has been deprecated.'),
  latest_version: z
    .number()
    .int()
    .nullable()
    .describe('The latest version of the state machine; null while no version exists.'),
});

export const listStateMachinesResponse = pagedResponse({
  service_hierarchical_state_machines: z
    .array(stateMachineRecord)
    .describe('The state machines for this organization.'),
});

const createdVersion = z.object({
  version: z.number().int().describe('The version number; the first version of a state machine is 1.'),
  created_at: timestamp.describe('The time at which this version was created.'),
});

/** 201 body of the create-version operation; null on a dry run, which only validates. */
export const createStateMachineVersionResponse = createdVersion.nullable();

/** A stored version as listed by `GET .../{service_hierarchical_state_machine_id}/version`. */
export const stateMachineVersionRecord = z.object({
  org_id: z.string().describe('The ID of the organization of this state machine.'),
  service_hierarchical_state_machine_id: z.string().describe('The ID of the state machine that this is a version of.'),
  ...createdVersion.shape,
  creator: creatorInfo.describe('The user who created this version of the state machine.'),
  ...recordSchemas.versionContent.shape,
});

export const listStateMachineVersionsResponse = pagedResponse({
  state_machine_versions: z.array(stateMachineVersionRecord).describe('The returned state machine versions.'),
});

export type NextState = z.infer<typeof requestSchemas.nextState>;
export type ExitCondition = z.infer<typeof requestSchemas.exitCondition>;
export type ToolCallSpec = z.infer<typeof requestSchemas.toolCallSpec>;
export type ActionState = z.infer<typeof requestSchemas.actionState>;
export type DecisionState = z.infer<typeof requestSchemas.decisionState>;
export type RecallState = z.infer<typeof requestSchemas.recallState>;
export type AnnotationState = z.infer<typeof requestSchemas.annotationState>;
export type ReflectionState = z.infer<typeof requestSchemas.reflectionState>;
export type ToolCallState = z.infer<typeof requestSchemas.toolCallState>;
export type State = z.infer<typeof requestSchemas.state>;
export type StateMachineVersionBody = z.infer<typeof stateMachineVersionBody>;
export type CreateStateMachineRequest = z.infer<typeof createStateMachineRequest>;
export type CreateStateMachineResponse = z.infer<typeof createStateMachineResponse>;
export type StateMachineRecord = z.infer<typeof stateMachineRecord>;
export type ListStateMachinesResponse = z.infer<typeof listStateMachinesResponse>;
export type CreateStateMachineVersionResponse = z.infer<typeof createStateMachineVersionResponse>;
export type StateMachineVersionRecord = z.infer<typeof stateMachineVersionRecord>;
export type ListStateMachineVersionsResponse = z.infer<typeof listStateMachineVersionsResponse>;
