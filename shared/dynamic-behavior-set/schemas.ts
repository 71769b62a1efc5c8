import { z } from 'zod';
import { versionInfo } from '../../events/stream-events';
import { creatorInfo, objectId, pagedResponse, strippedText, tagMap, tagsInput } from '../kernel/schemas';
import {
  toolCallSpecInput,
  toolCallSpecRecord,
  transferInstructionInput,
  transferInstructionRecord,
} from '../state-machine/schemas';

/**
 * Dynamic behavior sets. The spec gives a version a single `action {type, instruction,
 * overrides_instructions}`; the reference an `actions[]` of `inject-instruction` and
 * `change-tool-candidates`. Both are accepted and stored as `actions[]`; records show both.
 */

/** A platform extension: a behavior that asks for a person (the conversation joins the operators' queue). */
const escalationInput = z
  .object({ reason: strippedText.max(1000).describe('Why a person is needed; shown to operators.') })
  .nullish()
  .describe(
    'A platform extension: when the behavior is selected, the conversation is escalated to an operator with this reason.',
  );

const injectInstruction = z.object({
  type: z.literal('inject-instruction'),
  instruction: strippedText.max(10_000).describe('The instruction the agent follows while the behavior is selected.'),
  overrides_instructions: z
    .boolean()
    .describe("Whether the state's own guidelines and constraints are replaced (true) or kept (false)."),
  escalation: escalationInput,
  transfer: transferInstructionInput
    .nullish()
    .describe(
      'A platform extension: when the behavior is selected, the agent hands the user to a person. In a phone call, once its words are spoken the call is transferred to phone_to and the conversation finishes as transferred; in any other conversation it is escalated to an operator.',
    ),
});

const changeToolCandidates = z.object({
  type: z.literal('change-tool-candidates'),
  tool_call_specs: z
    .array(toolCallSpecInput.extend({ tool_name: strippedText.describe('The name of the tool.') }))
    .max(20)
    .describe('The tool calls offered while the behavior is selected.'),
  overrides_existing_tool_call_specs: z
    .boolean()
    .describe("Whether these specs replace the state's tool call specs (true) or are added to them (false)."),
});

export const behaviorActionInput = z.discriminatedUnion('type', [injectInstruction, changeToolCandidates]);

/** Each trigger is embedded once, when its version is created. */
const conversationTriggers = z
  .array(strippedText.max(2000))
  .min(1)
  .max(50)
  .describe('Natural-language situations in which the behavior applies; matched by meaning against recent messages.');

const versionShape = {
  conversation_triggers: conversationTriggers,
  actions: z.array(behaviorActionInput).min(1).max(10).optional().describe('The actions (reference revision).'),
  action: injectInstruction.optional().describe('The single action (spec revision); give this or `actions`.'),
};

type VersionFields = { actions?: z.infer<typeof behaviorActionInput>[]; action?: z.infer<typeof injectInstruction> };

const requireOneActionForm = (body: VersionFields, context: z.RefinementCtx): void => {
  if ((body.actions === undefined) === (body.action === undefined)) {
    context.addIssue({ code: 'custom', path: ['actions'], message: 'Give exactly one of `actions` and `action`.' });
  }
};

const actionsOf = (body: VersionFields) => body.actions ?? (body.action ? [body.action] : []);

/** Either revision of a version's body, normalized to `actions[]`. */
export const behaviorVersionBody = z
  .object(versionShape)
  .superRefine(requireOneActionForm)
  .transform((body) => ({ conversation_triggers: body.conversation_triggers, actions: actionsOf(body) }));

export const createBehaviorSetRequest = z.object({
  name: strippedText.max(256).describe('The name of the dynamic behavior set.'),
  tags: tagsInput.default({}).describe('The tags of the dynamic behavior set.'),
  applied_to_services: z.array(objectId).max(100).describe('The services the set applies to.'),
  initial_version: z
    .object({ is_active: z.boolean().describe('Whether the set is active.'), ...versionShape })
    .superRefine(requireOneActionForm)
    .transform((body) => ({
      is_active: body.is_active,
      conversation_triggers: body.conversation_triggers,
      actions: actionsOf(body),
    }))
    .describe('The first version of the set.'),
});

export const createBehaviorSetResponse = z.object({
  dynamic_behavior_set_id: z.string().describe('The ID of the newly created dynamic behavior set.'),
});

export const updateBehaviorSetRequest = z.object({
  name: strippedText.max(256).nullish().describe('The name of the set. Only updated if not-null.'),
  tags: tagsInput.nullish().describe('The tags of the set. Only updated if not-null.'),
  applied_to_services: z
    .array(objectId)
    .max(100)
    .nullish()
    .describe('The services the set applies to. Only updated if not-null.'),
  is_active: z.boolean().nullish().describe('Whether the set is active. Only updated if not-null.'),
});

export const createBehaviorVersionResponse = z.object({
  new_version_number: z.number().int().describe('The version number of the new version.'),
});

const injectInstructionRecord = z.object({
  type: z.literal('inject-instruction'),
  instruction: z.string(),
  overrides_instructions: z.boolean(),
  escalation: z.object({ reason: z.string() }).nullish(),
  transfer: transferInstructionRecord.nullish(),
});

export const behaviorActionRecord = z.discriminatedUnion('type', [
  injectInstructionRecord,
  z.object({
    type: z.literal('change-tool-candidates'),
    tool_call_specs: z.array(toolCallSpecRecord.extend({ tool_name: z.string() })),
    overrides_existing_tool_call_specs: z.boolean(),
  }),
]);

export const behaviorSetRecord = z.object({
  id: z.string(),
  name: z.string(),
  is_active: z.boolean(),
  applied_to_services: z.array(z.string()),
  tags: tagMap,
  created_at: z.string(),
  creator: creatorInfo,
  updated_at: z.string(),
  updated_by: creatorInfo,
});

export const behaviorVersionRecord = z.object({
  _id: z.string(),
  org_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  dynamic_behavior_set_id: z.string(),
  version: z.number().int(),
  conversation_triggers: z.array(z.string()),
  actions: z.array(behaviorActionRecord),
  action: injectInstructionRecord
    .nullable()
    .describe('The first inject-instruction action (the spec revision), if any.'),
  creator: creatorInfo,
});

export const behaviorInvocationRecord = z.object({
  _id: z.string(),
  org_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  conversation_id: z.string(),
  service_id: z.string(),
  user_id: z.string(),
  initial_message_id: z.string(),
  agent_message_id: z.string().nullable(),
  agent_inner_thoughts_ids: z.array(z.string()),
  dynamic_behavior_set_version_info: versionInfo,
  invoked_at: z.string(),
  external_event_message_ids: z.array(z.string()),
});

export const listBehaviorSetsResponse = pagedResponse({
  dynamic_behavior_sets: z.array(behaviorSetRecord).describe('The retrieved dynamic behavior sets.'),
}).extend({
  filter_values: z
    .object({
      applied_to_services_ids: z.array(z.string()),
      creators: z.array(creatorInfo),
      tags: z.array(z.string()).describe('As key:value.'),
    })
    .nullable()
    .describe("Values the filters can take, over the organization's sets; only on the first page."),
});

export const searchBehaviorSetsResponse = z.object({
  dynamic_behavior_sets: z.array(behaviorSetRecord).describe('The best matches, at most 50, most relevant first.'),
});

export const listBehaviorVersionsResponse = pagedResponse({
  dynamic_behavior_set_versions: z.array(behaviorVersionRecord),
});

export const listBehaviorInvocationsResponse = pagedResponse({
  dynamic_behavior_invocations: z.array(behaviorInvocationRecord),
});

export type BehaviorAction = z.infer<typeof behaviorActionRecord>;
export type BehaviorVersionBody = z.infer<typeof behaviorVersionBody>;
export type CreateBehaviorSetRequest = z.infer<typeof createBehaviorSetRequest>;
export type UpdateBehaviorSetRequest = z.infer<typeof updateBehaviorSetRequest>;
export type BehaviorSetRecord = z.infer<typeof behaviorSetRecord>;
export type BehaviorVersionRecord = z.infer<typeof behaviorVersionRecord>;
export type BehaviorInvocationRecord = z.infer<typeof behaviorInvocationRecord>;
