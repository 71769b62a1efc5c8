import type { CreateConversationEvent, InteractEvent } from '../../events/stream-events';
import { requireConversation } from '../conversation/conversation-lookup';
import { interactWithConversation, startConversation } from '../conversation/conversations';
import { closeConversation } from '../conversation/finishing';
import { getUserServiceState, listInteractions, recentMessages } from '../conversation/index';
import type { ConversationRecord, InteractionRecord } from '../conversation/schemas';
import type { StreamOptions } from '../conversation/turn-lifecycle';
import { transactWrite } from '../data/table';
import type { Caller, PermissionGrant } from '../kernel/caller';
import { ConflictError, DomainError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import type { LlmModelPreferences } from '../llm/registry';
import type { SimulatedUserBrief, SimulatedUserLine } from '../llm/simulated-user-prompt';
import { defaultUserPreferences } from '../organization/user-preferences';
import { getUser, userCreateItems, userModelsPut } from '../user/index';
import { newUserRecord } from '../user/users';
import { noteRunConversationStarted } from './run-repository';
import type { ConversationEnding, RunConversationRecord, StoredUnitTestRunSpec } from './run-schemas';
import { nextSimulatedUserTurn } from './simulated-user';

/**
 * Drives one simulated conversation through the same domain functions as a real one
 * (`startConversation`, `interactWithConversation`, `finishConversation`: the same engine,
 * storage, leases and analysis), as the synthetic user the persona describes. Nothing is
 * kept in memory between steps: the conversation in the table is the checkpoint, so a step
 * can resume in another invocation, and a redelivered message repeats no turn already stored.
 */

/** The most messages the simulated user reads back (max_interactions is at most 100, two or three messages each). */
const transcriptBound = 400;
/**
 * What a synthetic user may do: start, talk in and finish its own conversations. It exists only in
 * this worker, which has it talk in its record's conversation alone: talking there is not
 * conditioned, since a conversation made from a real one (`derived_from`) is decided on as on that
 * one too, whose user it is not (the run's creator was checked to read what it copied).
 */
const syntheticUserGrants: PermissionGrant[] = [
  ...['Conversation:CreateConversation', 'User:UpdateUserInfo'].map(
    (permission_name): PermissionGrant => ({
      action: 'Allow',
      permission_name,
      conditions: { user_id: { type: 'Equals', value: '$caller.user_id' } },
    }),
  ),
  { action: 'Allow', permission_name: 'Conversation:InteractWithConversation', conditions: {} },
];
/** The synthetic user sees no agent actions, as a user without insight permissions would. */
const userStream: StreamOptions = { agentActionType: /^$/ };

const syntheticEmail = (record: RunConversationRecord) =>
  `simulated-user+${record.run_id}-${record.unit_test_id}-${record.run_index}@simulation.invalid`;

const syntheticCaller = (orgId: string, record: RunConversationRecord): Caller => ({
  userId: record.user_id,
  homeOrgId: orgId,
  orgId,
  roleId: 'simulated-user',
  roleName: 'SimulatedUser',
  grants: syntheticUserGrants,
  email: syntheticEmail(record),
  isVerified: false,
  tokenType: 'Bearer',
});

export const briefOf = (spec: StoredUnitTestRunSpec): SimulatedUserBrief => ({
  persona: {
    name: spec.persona.name,
    role: spec.persona.role,
    background: spec.persona.background,
    user_models: spec.persona.user_models,
    preferred_language: spec.persona.preferred_language,
    timezone: spec.persona.timezone,
  },
  scenario: { objective: spec.scenario.objective, instructions: spec.scenario.instructions },
});

/**
 * Creates the synthetic user of a run conversation once (a redelivery finds it): named after the
 * persona, with its language, timezone, user variables (sensitive ones sealed as snapshotted)
 * and user models. It cannot sign in: it has no credentials and an address that takes no mail.
 */
export const ensureSyntheticUser = async (
  orgId: string,
  record: RunConversationRecord,
  spec: StoredUnitTestRunSpec,
): Promise<void> => {
  if (await getUser(orgId, record.user_id, true)) return;
  const { persona } = spec;
  const at = nowIso();
  const user = {
    ...newUserRecord(
      {
        orgId,
        firstName: persona.name,
        lastName: '',
        email: syntheticEmail(record),
        roleName: 'DefaultUserRole',
        verified: false,
        preferences: {
          ...defaultUserPreferences(),
          preferred_language: persona.preferred_language,
          timezone: persona.timezone,
        },
        nonsensitiveVariables: persona.nonsensitive_user_variables,
        sensitiveVariables: persona.sealed_sensitive_user_variables,
      },
      at,
    ),
    user_id: record.user_id,
    is_simulated: true as const,
  };
  const models =
    persona.user_models.length > 0
      ? [
          {
            Put: userModelsPut(orgId, undefined, {
              user_id: user.user_id,
              user_models: persona.user_models.map((content) => ({ content, insight_ids: [], dimensions: [] })),
              updated_at: at,
            }),
          },
        ]
      : [];
  try {
    await transactWrite([...userCreateItems(user), ...models]);
  } catch (error) {
    // Another delivery created it meanwhile.
    if (!(error instanceof ConflictError) || !(await getUser(orgId, record.user_id, true))) throw error;
  }
};

/** A step's end: the conversation goes on in a later step, or it is over. */
export type StepResult =
  | { status: 'continue'; conversationId: string; interactions: number }
  | {
      status: 'ended';
      ending: ConversationEnding;
      error: string | null;
      conversationId: string | null;
      interactions: InteractionRecord[];
    };

export interface StepLimits {
  /** Turns this step may take (the opening included). */
  maxTurns: number;
  /** Epoch milliseconds after which no new turn starts. */
  deadline: number;
  /** Whether the run was cancelled: checked before each turn. */
  isCancelled: () => Promise<boolean>;
  signal?: AbortSignal;
}

/** What a turn's stream said at its end. */
interface TurnEnd {
  conversationId: string | null;
  completed: boolean;
  /** A refusal that retrying cannot fix (4xx); a 5xx is thrown so the message is retried. */
  refusal: string | null;
}

const consumeTurn = async (events: AsyncIterable<CreateConversationEvent | InteractEvent>): Promise<TurnEnd> => {
  const end: TurnEnd = { conversationId: null, completed: false, refusal: null };
  for await (const event of events) {
    if (event.type === 'conversation-created') end.conversationId = event.conversation_id;
    if (event.type === 'interaction-complete') end.completed = event.conversation_completed;
    if (event.type === 'error') {
      if (event.http_error_code >= 500) throw new DomainError(event.http_error_code, event.error_description);
      end.refusal = event.error_description;
    }
  }
  return end;
};

const speakerOf = { 'user-message': 'user', 'agent-message': 'agent', 'external-event': 'external-event' } as const;

const transcriptOf = async (conversation: ConversationRecord): Promise<SimulatedUserLine[]> =>
  (await recentMessages(conversation.org_id, conversation.id, transcriptBound)).flatMap((message) =>
    message.message_type === 'agent-inner-thought'
      ? []
      : [{ speaker: speakerOf[message.message_type], text: message.message }],
  );

/** Starts the conversation with the scenario's opening: the user's (or an external event's) first message, or none (`skip`: the agent speaks first). */
const openConversation = async (
  orgId: string,
  caller: Caller,
  spec: StoredUnitTestRunSpec,
  record: RunConversationRecord,
  signal: AbortSignal | undefined,
): Promise<TurnEnd> => {
  const type = spec.scenario.initial_message_type;
  const opening =
    type === 'skip'
      ? undefined
      : {
          type,
          text:
            (type === 'external-event' ? spec.scenario.initial_external_event : null) ??
            (await nextSimulatedUserTurn(preferencesOf(spec), briefOf(spec), [], signal)).message,
        };
  const { events } = await startConversation(orgId, caller, {
    serviceId: spec.service_id,
    versionSetName: spec.version_set_name,
    ...(opening ? { initialMessage: opening } : {}),
    tags: {},
    stream: userStream,
    simulation: {
      versions: {
        name: spec.version_set_name,
        agentId: spec.agent_version_info[0],
        agentVersion: spec.agent_version_info[1],
        stateMachineId: spec.service_hierarchical_state_machine_version_info[0],
        stateMachineVersion: spec.service_hierarchical_state_machine_version_info[1],
        llmModelPreferences: spec.llm_model_preferences,
      },
      source: {
        simulation_unit_test_set_run_id: record.run_id,
        unit_test_id: record.unit_test_id,
        run_index: record.run_index,
      },
      toolMocks: spec.tool_mocks,
      initialState: spec.initial_state,
      clockStartsAt: spec.scenario.conversation_starts_at,
      ...(spec.derived_from
        ? {
            derivedFrom: {
              id: spec.derived_from.conversation_id,
              user_id: spec.derived_from.user_id,
              service_id: spec.derived_from.service_id,
              tags: spec.derived_from.tags,
            },
          }
        : {}),
    },
  });
  return consumeTurn(events);
};

const preferencesOf = (spec: StoredUnitTestRunSpec) => spec.llm_model_preferences as LlmModelPreferences;

/**
 * How a conversation found finished ended, from its last interaction and the interaction bound
 * (a redelivery after the step that finished it; that step knew, and said so when it could).
 */
const endingOf = (interactions: InteractionRecord[], maxInteractions: number): ConversationEnding => {
  if (interactions.at(-1)?.conversation_completed) return 'agent-completed';
  return interactions.length >= maxInteractions ? 'max-interactions' : 'user-completed';
};

/**
 * Takes turns of a simulated conversation until it ends or the step's limits are reached. The
 * conversation ends when the agent completes it, when the simulated user says it is done (the
 * conversation is then finished), when `max_interactions` interactions were made without
 * either (finished; a failure), or when the run is cancelled (finished, checked between turns).
 */
export const advanceSimulatedConversation = async (
  orgId: string,
  record: RunConversationRecord,
  spec: StoredUnitTestRunSpec,
  limits: StepLimits,
): Promise<StepResult> => {
  const caller = syntheticCaller(orgId, record);
  let conversationId =
    record.conversation_id ?? (await getUserServiceState(orgId, record.user_id, spec.service_id)).activeConversationId;
  let turns = 0;
  if (!conversationId) {
    const opened = await openConversation(orgId, caller, spec, record, limits.signal);
    turns += 1;
    if (!opened.conversationId) {
      return { status: 'ended', ending: 'error', error: opened.refusal, conversationId: null, interactions: [] };
    }
    conversationId = opened.conversationId;
  }
  if (!record.conversation_id) await noteRunConversationStarted(orgId, record, conversationId);
  for (;;) {
    const conversation = await requireConversation(orgId, conversationId, true);
    const interactions = await listInteractions(orgId, conversationId, spec.max_interactions + 1);
    const ended = (ending: ConversationEnding, error: string | null = null): StepResult => ({
      status: 'ended',
      ending,
      error,
      conversationId,
      interactions,
    });
    if (conversation.is_finished) return ended(endingOf(interactions, spec.max_interactions));
    if (interactions.length >= spec.max_interactions || (await limits.isCancelled())) {
      await closeConversation(conversation, { trigger: 'finish-conversation' });
      return ended(interactions.length >= spec.max_interactions ? 'max-interactions' : 'cancelled');
    }
    if (turns >= limits.maxTurns || Date.now() > limits.deadline) {
      return { status: 'continue', conversationId, interactions: interactions.length };
    }
    const next = await nextSimulatedUserTurn(
      preferencesOf(spec),
      briefOf(spec),
      await transcriptOf(conversation),
      limits.signal,
    );
    const { events } = await interactWithConversation(orgId, caller, {
      conversationId,
      messageType: 'user-message',
      text: next.message,
      externalEvents: [],
      stream: userStream,
    });
    const turn = await consumeTurn(events);
    turns += 1;
    if (turn.refusal) return ended('error', turn.refusal);
    if (!turn.completed && next.conversation_completed) {
      await closeConversation(await requireConversation(orgId, conversationId, true), {
        trigger: 'finish-conversation',
      });
      return {
        status: 'ended',
        ending: 'user-completed',
        error: null,
        conversationId,
        interactions: await listInteractions(orgId, conversationId, spec.max_interactions + 1),
      };
    }
  }
};
