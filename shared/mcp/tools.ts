import type { z } from 'zod';
import { submitSqlQueryOperation } from '../admin/operations';
import { listAgents } from '../agent/agents';
import { getAgentsOperation } from '../agent/operations';
import { interactWithConversation, startConversation } from '../conversation/conversations';
import { finishConversation } from '../conversation/finishing';
import {
  finishConversationOperation,
  getConversationMessagesOperation,
  getConversationsOperation,
} from '../conversation/operations';
import { listConversations, listMessages } from '../conversation/queries';
import { defaultMessageTypes } from '../conversation/schemas';
import { createConversationOperation, interactWithConversationOperation } from '../conversation/stream-operations';
import type { StreamedTurn } from '../conversation/turn-lifecycle';
import type { Caller } from '../kernel/caller';
import { callerPattern } from '../kernel/caller-patterns';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { parseTagFilters } from '../kernel/list-params';
import type { PermissionName } from '../kernel/permissions';
import { getServicesOperation } from '../service/operations';
import { listServices } from '../service/services';
import { createRunOperation, getRunsOperation } from '../simulation/run-operations';
import { runListQuery } from '../simulation/run-schemas';
import {
  conversationInput,
  getConversationMessagesInput,
  getSimulationRunInput,
  listAgentsInput,
  listServicesInput,
  runSimulationInput,
  searchConversationsInput,
  sendMessageInput,
  sqlQueryInput,
  startConversationInput,
} from './schemas';

/**
 * The tools the platform serves over MCP (`mcp-server.ts`). Each stands for one REST operation:
 * it calls the operation's domain function as the caller, so it needs that operation's permission
 * (the domain function checks it as REST does) and draws on that operation's rate limit, the same
 * bucket REST calls draw on. What it answers is the operation's answer: a text for the model and
 * the same as `structuredContent`.
 */
export interface ToolContext {
  orgId: string;
  caller: Caller;
  /** Sends a piece of a long answer ahead (MCP progress), when the client asked for progress. */
  progress?: (message: string) => Promise<void>;
}

export interface ToolAnswer {
  text: string;
  structured: Record<string, unknown>;
}

export interface PlatformTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** The REST operation it stands for: its rate limit is shared with it. */
  operation: { operationId: string; rateLimitPerMinute?: number };
  /** The operation's permission: a caller holding no grant of it is refused before anything runs. */
  permission: PermissionName;
  /** It changes nothing (MCP's `readOnlyHint`). */
  readOnly: boolean;
  run(context: ToolContext, input: z.output<S>): Promise<ToolAnswer>;
}

const tool = <S extends z.ZodObject>(definition: PlatformTool<S>): PlatformTool =>
  definition as unknown as PlatformTool;

/** An answer whose text is its JSON, as MCP asks of structured results. */
const asJson = (structured: Record<string, unknown>): ToolAnswer => ({ text: JSON.stringify(structured), structured });

/** Turns stream no agent actions to MCP: only the agent's words are the answer. */
const noAgentActions = () => callerPattern('^$', ['query', 'current_agent_action_type']);

/**
 * Reads a turn to its end (the agent's message, sent ahead piece by piece when the client asked
 * for progress) and waits until it is stored; a turn that ends in an error event is that error.
 */
const readTurn = async (
  turn: Pick<StreamedTurn<never>, 'settled'> & { events: AsyncIterable<unknown> },
  progress: ToolContext['progress'],
) => {
  let conversationId: string | undefined;
  let complete: Record<string, unknown> | undefined;
  let failure: string | undefined;
  for await (const event of turn.events as AsyncIterable<Record<string, unknown> & { type: string }>) {
    if (event.type === 'conversation-created') conversationId = String(event.conversation_id);
    else if (event.type === 'new-message' && typeof event.message === 'string' && event.message !== '')
      await progress?.(event.message);
    else if (event.type === 'interaction-complete') complete = event;
    else if (event.type === 'error') failure = String(event.error_description);
  }
  await turn.settled;
  if (failure !== undefined || !complete) throw new BadRequestError(failure ?? 'The turn ended without an answer.');
  return {
    conversationId,
    answer: {
      interaction_id: String(complete.interaction_id),
      message_id: String(complete.message_id),
      message: String(complete.full_message),
      conversation_completed: complete.conversation_completed === true,
      ...(complete.timings ? { timings: complete.timings } : {}),
    },
  };
};

export const platformTools: readonly PlatformTool[] = [
  tool({
    name: 'list_services',
    title: 'List services',
    description:
      "Lists the organization's services: the conversational agents users talk to, each with its version sets (`release` is the one users get). Page with `continuation_token`.",
    input: listServicesInput,
    operation: getServicesOperation,
    permission: 'Service:GetService',
    readOnly: true,
    run: async ({ orgId, caller }, input) =>
      asJson(
        await listServices(orgId, caller, {
          isActive: input.is_active,
          tags: [],
          sortBy: [],
          limit: input.limit,
          continuationToken: input.continuation_token,
        }),
      ),
  }),
  tool({
    name: 'list_agents',
    title: 'List agents',
    description: "Lists the organization's agents (the personas services use), with their latest version.",
    input: listAgentsInput,
    operation: getAgentsOperation,
    permission: 'Organization:GetAgent',
    readOnly: true,
    run: async ({ orgId, caller }, input) => {
      const page = await listAgents(orgId, caller, {
        deprecated: input.deprecated,
        limit: input.limit,
        continuationToken: input.continuation_token,
      });
      return asJson({ agents: page.items, has_more: page.has_more, continuation_token: page.continuation_token });
    },
  }),
  tool({
    name: 'start_conversation',
    title: 'Start a conversation',
    description:
      "Starts a conversation with a service as the caller, and answers the conversation's id and the agent's opening message. Continue it with `send_message`.",
    input: startConversationInput,
    operation: createConversationOperation,
    permission: 'Conversation:CreateConversation',
    readOnly: false,
    run: async ({ orgId, caller, progress }, input) => {
      const turn = await startConversation(orgId, caller, {
        serviceId: input.service_id,
        versionSetName: input.version_set_name,
        tags: {},
        stream: { agentActionType: await noAgentActions() },
      });
      const { conversationId, answer } = await readTurn(turn, progress);
      return { text: answer.message, structured: { conversation_id: conversationId, ...answer } };
    },
  }),
  tool({
    name: 'send_message',
    title: 'Send a message',
    description:
      "Sends the user's message to a conversation and answers the agent's reply (its pieces come ahead as progress when asked), with the interaction's id and where the turn spent its time.",
    input: sendMessageInput,
    operation: interactWithConversationOperation,
    permission: 'Conversation:InteractWithConversation',
    readOnly: false,
    run: async ({ orgId, caller, progress }, input) => {
      const turn = await interactWithConversation(orgId, caller, {
        conversationId: input.conversation_id,
        messageType: 'user-message',
        text: input.message,
        externalEvents: [],
        stream: { agentActionType: await noAgentActions() },
      });
      const { answer } = await readTurn(turn, progress);
      return { text: answer.message, structured: { conversation_id: input.conversation_id, ...answer } };
    },
  }),
  tool({
    name: 'get_conversation_messages',
    title: 'Get conversation messages',
    description:
      "A conversation's messages (the user's, the agent's and external events), oldest first unless `newest_first`.",
    input: getConversationMessagesInput,
    operation: getConversationMessagesOperation,
    permission: 'Conversation:GetMessage',
    readOnly: true,
    run: async ({ orgId, caller }, input) =>
      asJson(
        await listMessages(orgId, caller, input.conversation_id, {
          messageTypes: defaultMessageTypes,
          sortBy: [{ field: 'created_at', direction: input.newest_first ? 'desc' : 'asc' }],
          limit: input.limit,
          continuationToken: input.continuation_token,
        }),
      ),
  }),
  tool({
    name: 'finish_conversation',
    title: 'Finish a conversation',
    description: 'Finishes a conversation: no more messages, and its analysis (memories, metrics) starts.',
    input: conversationInput,
    operation: finishConversationOperation,
    permission: 'Conversation:FinishConversation',
    readOnly: false,
    run: async ({ orgId, caller }, input) => {
      await finishConversation(orgId, caller, input.conversation_id);
      return {
        text: `Conversation ${input.conversation_id} is finished.`,
        structured: { conversation_id: input.conversation_id, is_finished: true },
      };
    },
  }),
  tool({
    name: 'search_conversations',
    title: 'Search conversations',
    description: "Finds the organization's conversations by service, state and tags, newest first.",
    input: searchConversationsInput,
    operation: getConversationsOperation,
    permission: 'Conversation:GetConversation',
    readOnly: true,
    run: async ({ orgId, caller }, input) =>
      asJson(
        await listConversations(orgId, caller, {
          serviceIds: input.service_id ? [input.service_id] : undefined,
          isFinished: input.is_finished,
          tags: parseTagFilters(input.tags, 'tags'),
          sortBy: [],
          limit: input.limit,
          continuationToken: input.continuation_token,
        }),
      ),
  }),
  tool({
    name: 'run_simulation',
    title: 'Run a simulation',
    description:
      'Runs a simulation unit test set (simulated users talk to the service and metrics judge them); answers the run id. `get_simulation_run` tells when it has completed and its results.',
    input: runSimulationInput,
    operation: createRunOperation,
    permission: 'Simulation:CreateSimulationUnitTestSetRun',
    readOnly: false,
    // Simulations and SQL are what few calls do: their code loads on first use.
    run: async ({ orgId, caller }, input) => {
      const { createRun } = await import('../simulation/runs');
      const created = await createRun(orgId, caller, input.simulation_unit_test_set_id);
      return {
        text: `Run ${created.simulation_unit_test_set_run_id} started; get_simulation_run tells when it has completed and its results.`,
        structured: created,
      };
    },
  }),
  tool({
    name: 'get_simulation_run',
    title: 'Get a simulation run',
    description:
      "A simulation run: whether it has completed, errored or failed a metric, and each unit test's results.",
    input: getSimulationRunInput,
    operation: getRunsOperation,
    permission: 'Simulation:GetSimulationUnitTestSetRun',
    readOnly: true,
    run: async ({ orgId, caller }, input) => {
      const { listRuns } = await import('../simulation/runs');
      const runId = input.simulation_unit_test_set_run_id;
      const [run] = (await listRuns(orgId, caller, runListQuery.parse({ id: runId }))).simulation_unit_test_set_runs;
      if (!run) throw new NotFoundError(`Simulation unit test set run ${runId} does not exist.`);
      return asJson(run);
    },
  }),
  tool({
    name: 'sql_query',
    title: 'SQL query',
    description:
      "Runs one read-only SELECT over the organization's data (conversations, messages, interactions, users, services, agents, memories, metrics, metric_evaluation_results, tool_invocations) and answers at most 1,000 rows.",
    input: sqlQueryInput,
    operation: submitSqlQueryOperation,
    permission: 'Admin:SqlQuery',
    readOnly: true,
    run: async ({ orgId, caller }, input) => {
      const { submitSqlQuery } = await import('../admin/sql-query');
      return asJson(await submitSqlQuery(orgId, caller, { sql_query: input.sql_query, async_query: false }));
    },
  }),
];
