import { z } from 'zod';
import { creatorInfo, objectId, strippedText, timestamp } from '../kernel/schemas';
import { llmConfigRecord } from '../service/schemas';
import { toolMock } from '../tool/schemas';
import { personaSnapshot, scenarioSnapshot } from './run-schemas';
import { derivedFrom } from './schemas';

/*
 * Simulation sessions (a platform extension, after the vendor's newer platform): a simulated
 * conversation stepped a turn at a time, forked at any interaction into alternatives, scored and
 * given suggestions for the caller's next words. Shapes are pure zod; no I/O.
 */

/** How long a session lives by default, and at most (its conversation's items expire with it). */
export const defaultSessionHours = 24;
export const maxSessionHours = 30 * 24;
/** The most alternatives one fork makes. */
export const maxForkAlternatives = 8;
/** The most sessions one fork tree holds: a tree is read whole. */
export const maxSessionsPerTree = 200;
/** The most metrics one score judges. */
export const maxScoredMetrics = 10;

const callerText = strippedText
  .max(10_000)
  .describe("What the caller says this turn; without it, the persona's simulated user speaks.");

const ttlHours = z
  .number()
  .int()
  .min(1)
  .max(maxSessionHours)
  .default(defaultSessionHours)
  .describe(
    "How long the session is kept, in hours (its conversation's items expire with it; never later than the organization's retention keeps conversations).",
  );

export const createSessionRequest = z.union([
  z.strictObject({
    service_id: objectId.describe('The service the session talks to.'),
    version_set_name: z.string().min(1).max(40).default('release').describe('The version set of the service to use.'),
    persona_id: objectId.nullish().describe('The persona whose simulated user speaks when a step gives no text.'),
    scenario_id: objectId
      .nullish()
      .describe('The scenario the simulated user pursues; its opening (`initial_message_type`) opens the session.'),
    tool_mocks: z
      .array(toolMock)
      .max(50)
      .default([])
      .describe('Tools that answer a mock instead of running (as a unit test’s).'),
    ttl_hours: ttlHours,
  }),
  z.strictObject({
    from_conversation_id: objectId.describe('The real conversation whose history the session starts from.'),
    at_interaction_id: objectId.describe(
      "The interaction of that conversation after which the session goes on: its history up to there is replayed into the session's own records.",
    ),
    version_set_name: z
      .string()
      .min(1)
      .max(40)
      .nullish()
      .describe("The version set the session runs on (a candidate); by default the conversation's own versions."),
    persona_id: objectId.nullish().describe('The persona whose simulated user speaks when a step gives no text.'),
    scenario_id: objectId.nullish().describe('The scenario the simulated user pursues.'),
    ttl_hours: ttlHours,
  }),
]);
export type CreateSessionRequest = z.infer<typeof createSessionRequest>;

export const stepSessionRequest = z.strictObject({ caller_text: callerText.nullish() });

export const forkSessionRequest = z.strictObject({
  at_interaction_id: objectId
    .nullish()
    .describe("The interaction after which the alternatives branch off; by default the session's last one."),
  alternatives: z
    .array(z.strictObject({ caller_text: callerText.nullish() }))
    .min(1)
    .max(maxForkAlternatives)
    .describe(`From 1 to ${maxForkAlternatives} alternatives: each becomes a session that takes one step.`),
});

export const scoreSessionRequest = z.strictObject({
  metric_ids: z
    .array(objectId)
    .min(1)
    .max(maxScoredMetrics)
    .refine((ids) => new Set(ids).size === ids.length, { message: 'the metric ids must be distinct' })
    .describe('The metrics to judge the session by.'),
});

export const recommendRequest = z.strictObject({
  n: z.number().int().min(1).max(10).default(3).describe('How many next caller texts to propose.'),
});

/** A tool call as a session's turn shows it. */
export const turnToolCall = z.object({
  tool_name: z.string(),
  tool_id: z.string(),
  tool_version: z.string(),
  input: z.record(z.string(), z.unknown()),
  output: z.string().nullable(),
  mocked: z.boolean().describe('Answered by a mock or a recorded result; the tool did not run.'),
});
export type TurnToolCall = z.infer<typeof turnToolCall>;

/** A metric result of a session, from its latest score. */
export const sessionMetricResult = z.object({
  metric_id: z.string(),
  name: z.string(),
  value: z.union([z.boolean(), z.number(), z.string()]).nullable(),
  justification: z.string(),
  references: z.array(z.string()),
  scored_at: z.string(),
  through_interaction_id: z.string().describe('The last interaction the judgement read.'),
});
export type SessionMetricResult = z.infer<typeof sessionMetricResult>;

/** One turn of a session: the interaction, what the caller said, what the agent answered, where it went. */
export const sessionTurn = z.object({
  interaction_id: z.string(),
  created_at: z.string(),
  user_message: z.string().nullable().describe('What the caller said (null: the agent spoke first, or a skip).'),
  agent_message: z.string(),
  state: z.string().describe('The state the agent reached.'),
  state_path: z.array(z.string()).describe('The states the turn passed through, the one it started in first.'),
  tool_calls: z.array(turnToolCall),
  conversation_completed: z.boolean(),
});
export type SessionTurn = z.infer<typeof sessionTurn>;

export const sessionStatuses = ['active', 'finished'] as const;

/** The versions a session runs on, pinned when it was created. */
export const pinnedVersions = z.object({
  name: z.string(),
  agentId: z.string(),
  agentVersion: z.number().int(),
  stateMachineId: z.string(),
  stateMachineVersion: z.number().int(),
  llmModelPreferences: z.record(z.string(), llmConfigRecord),
});

export const sessionRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  creator: creatorInfo,
  created_at: z.string(),
  updated_at: z.string(),
  service_id: z.string(),
  versions: pinnedVersions,
  /** The synthetic user who speaks in the session's conversation. */
  user_id: z.string(),
  conversation_id: z.string(),
  /** The fork tree: its first session, the session this one was forked from and at which interaction. */
  root_id: z.string(),
  parent_id: z.string().nullable(),
  forked_at_interaction_id: z.string().nullable(),
  /** A session started from a real conversation, after one of its interactions. */
  from_conversation: z.object({ conversation_id: z.string(), at_interaction_id: z.string() }).nullable(),
  /** What the session copied from a real conversation: reading it needs what reading that needed. */
  derived_from: derivedFrom.nullable(),
  persona: personaSnapshot.nullable(),
  scenario: scenarioSnapshot.nullable(),
  tool_mocks: z.array(toolMock),
  status: z.enum(sessionStatuses),
  turn_count: z.number().int(),
  last_turn: sessionTurn.nullable(),
  metric_results: z.array(sessionMetricResult),
  /** When the session and its conversation expire (epoch seconds, the table's TTL attribute). */
  expires_at_epoch: z.number().int(),
  /** Optimistic concurrency: every write moves it on. */
  revision: z.number().int(),
});
export type SessionRecord = z.infer<typeof sessionRecord>;

/** What clients see of a session. */
export const sessionInstance = z.object({
  id: z.string(),
  conversation_id: z.string(),
  service_id: z.string(),
  version_set_name: z.string(),
  agent_version_info: z.tuple([z.string(), z.number().int()]),
  service_hierarchical_state_machine_version_info: z.tuple([z.string(), z.number().int()]),
  root_id: z.string(),
  parent_id: z.string().nullable(),
  forked_at_interaction_id: z.string().nullable(),
  from_conversation: z.object({ conversation_id: z.string(), at_interaction_id: z.string() }).nullable(),
  persona_name: z.string().nullable(),
  scenario_objective: z.string().nullable(),
  status: z.enum(sessionStatuses),
  turn_count: z.number().int(),
  last_turn: sessionTurn.nullable(),
  metric_results: z.array(sessionMetricResult),
  creator: creatorInfo,
  created_at: timestamp,
  expires_at: timestamp,
});
export type SessionInstance = z.infer<typeof sessionInstance>;

export const sessionIdPath = z.object({
  simulation_session_id: objectId.describe('The ID of the simulation session.'),
});

export const createdSession = z.object({
  id: z.string().describe('The ID of the session.'),
  conversation_id: z.string().describe("The session's conversation."),
  turn: sessionTurn.nullable().describe("The opening turn (the agent's, or its answer to the opening message)."),
});

export const stepResult = sessionTurn.extend({
  session_id: z.string(),
  conversation_id: z.string(),
  session_finished: z.boolean().describe('The agent or the simulated user ended the conversation: no further step.'),
  metric_results: z.array(sessionMetricResult).describe('The results of the latest score, if any.'),
});
export type StepResult = z.infer<typeof stepResult>;

export const forkResponse = z.object({
  sessions: z.array(
    z.object({ id: z.string(), conversation_id: z.string(), turn: sessionTurn.describe('The step it took.') }),
  ),
});

export const sessionTreeResponse = z.object({
  root_id: z.string(),
  sessions: z
    .array(
      sessionInstance
        .pick({
          id: true,
          conversation_id: true,
          parent_id: true,
          forked_at_interaction_id: true,
          status: true,
          turn_count: true,
          last_turn: true,
          created_at: true,
        })
        .describe('A branch of the tree with its last turn (null when the caller may not read what it copied).'),
    )
    .describe('Every session of the tree, in creation order (the root first).'),
});

export const sessionDetail = sessionInstance.extend({
  turns: z.array(sessionTurn).describe("The session's turns, oldest first (the shared history of a fork included)."),
});

export const scoreResponse = z.object({ metric_results: z.array(sessionMetricResult) });

export const recommendResponse = z.object({
  suggestions: z.array(z.string()).describe('Proposed next caller texts.'),
  generated_by: z
    .string()
    .describe(
      '`rule-based` (the built-in deterministic stand-in, not a language model) or the model, `provider:model`.',
    ),
});
