import type { z } from 'zod';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import { genAi, platformAttributes } from '../telemetry/gen-ai';
import { captureMessageContent, currentSpan, inSpan, tracingOn } from '../telemetry/tracing';
import type { EngineSession, ToolCallRequest } from './engine/contracts';
import type { ConversationRecord, toolCallLog } from './schemas';

/**
 * What a turn's spans say of it (`shared/telemetry/`, docs/observability.md): the `invoke_agent`
 * span each turn is (`tracedAgentTurn` in `conversations.ts`) and the `execute_tool` span of each
 * tool call. Free while traces are not exported: each hook then does nothing.
 */

/**
 * Names the turn's span after its agent once the session is loaded, with the conversation, the
 * agent, its service and version set, and the model the agent answers with.
 */
export const describeAgentTurn = (conversation: ConversationRecord, session: EngineSession, interactionId: string) => {
  if (!tracingOn) return;
  const span = currentSpan();
  const answering = resolveModel(
    conversation.version_set_info.llm_model_preferences as LlmModelPreferences,
    'engage_user',
  );
  const agentName = session.agent.identity.name;
  const [agentId, agentVersion] = conversation.version_set_info.agent_version_info;
  span.rename(`invoke_agent ${agentName}`);
  span.set({
    [genAi.conversationId]: conversation.id,
    [genAi.agentName]: agentName,
    [genAi.agentId]: agentId,
    [genAi.agentVersion]: String(agentVersion),
    [genAi.providerName]: answering.provider.name,
    [genAi.requestModel]: answering.model,
    [platformAttributes.organizationId]: conversation.org_id,
    [platformAttributes.serviceId]: conversation.service_id,
    [platformAttributes.versionSetName]: conversation.version_set_info.name,
    [platformAttributes.interactionId]: interactionId,
    [platformAttributes.stateMachineId]: session.stateMachine.id,
    [platformAttributes.stateMachineVersion]: session.stateMachine.version,
  });
};

/** The turn ended with an `error` event after its stream began: its span says it failed. */
export const failAgentTurn = (error: unknown): void => currentSpan().fail(error);

/**
 * A tool call of the turn as an `execute_tool {tool}` span: the platform runs the tool (an
 * extension, in the conventions' words); its input and output only where message content is captured.
 */
export const traceToolCall = (
  request: ToolCallRequest,
  call: () => Promise<z.infer<typeof toolCallLog>>,
): Promise<z.infer<typeof toolCallLog>> =>
  inSpan(
    `execute_tool ${request.tool.llmTool.name}`,
    {
      attributes: {
        [genAi.operationName]: 'execute_tool',
        [genAi.toolName]: request.tool.llmTool.name,
        [genAi.toolType]: 'extension',
        [genAi.toolDescription]: request.tool.llmTool.description,
        [platformAttributes.toolId]: request.tool.toolId,
        [platformAttributes.toolVersion]: request.tool.version,
        ...(captureMessageContent ? { [genAi.toolCallArguments]: JSON.stringify(request.input) } : {}),
      },
    },
    async (span) => {
      const log = await call();
      span.set({
        [platformAttributes.toolMocked]: log.mocked === true,
        ...(captureMessageContent ? { [genAi.toolCallResult]: log.output ?? undefined } : {}),
      });
      return log;
    },
  );
