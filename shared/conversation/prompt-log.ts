import { PutObjectCommand } from '@aws-sdk/client-s3';
import { s3 } from '../aws/clients';
import { config } from '../kernel/config';
import type { LlmProvider, LlmRequest } from '../llm/provider';
import { choiceSystemPrompt } from '../llm/structured-output';
import { logger } from '../aws/observability';

/** Where the model calls of one interaction are logged. */
export interface PromptLogScope {
  orgId: string;
  serviceId: string;
  conversationId: string;
  interactionId: string;
  /** Tells apart calls made for other purposes about the same interaction (e.g. `recommend-`). */
  callPrefix?: string;
}

/** `prompt-logs/{org}/{service}/{conversation}/{interaction}/{call prefix}`: what every call of the scope is logged under. */
export const promptLogPrefix = (scope: PromptLogScope): string =>
  `prompt-logs/${scope.orgId}/${scope.serviceId}/${scope.conversationId}/${scope.interactionId}/${scope.callPrefix ?? ''}`;

/** `{prefix}{n}`; `-system` and `-history` are appended. */
export const promptLogKey = (scope: PromptLogScope, callNumber: number): string => `${promptLogPrefix(scope)}${callNumber}`;

/** The history prompts of a call, one per message, separated by a line of three hyphens. */
export const historyLog = (request: Pick<LlmRequest, 'messages'>): string =>
  request.messages.map((message) => `${message.role}: ${message.content}`).join('\n---\n');

export interface PromptLogger {
  /** The provider with every call's system prompt and history logged (calls numbered from 1). */
  wrap(provider: LlmProvider): LlmProvider;
  /** The key prefix of this logger's calls (the admin prompt-log download's `prompt_log_prefix`). */
  readonly prefix: string;
  /** Waits for the logs written so far; a failed write is logged, never thrown. */
  flush(): Promise<void>;
}

/**
 * Logs each model call of an interaction to the artifact bucket. Writing does not hold up
 * the call (the first piece of a streamed answer must not wait for S3); `flush` before the
 * function returns makes sure every log is stored.
 */
export const createPromptLogger = (scope: PromptLogScope): PromptLogger => {
  let calls = 0;
  const pending: Promise<void>[] = [];
  const put = (key: string, body: string) =>
    s3().send(
      new PutObjectCommand({
        Bucket: config.artifactBucket,
        Key: key,
        Body: Buffer.from(body, 'utf8'),
        ContentType: 'text/plain; charset=utf-8',
      }),
    );
  const log = (request: LlmRequest): void => {
    calls += 1;
    const key = promptLogKey(scope, calls);
    pending.push(
      Promise.all([put(`${key}-system`, request.system), put(`${key}-history`, historyLog(request))]).then(
        () => undefined,
        (error: unknown) => logger.warn('prompt log not written', { key, error: error as Error }),
      ),
    );
  };
  return {
    prefix: promptLogPrefix(scope),
    wrap: (provider) => ({
      name: provider.name,
      streamText: (request) => {
        log(request);
        return provider.streamText(request);
      },
      chooseOption: (request) => {
        // The provider adds the options to the system prompt; the log shows the prompt as sent.
        log({ ...request, system: choiceSystemPrompt(request.system, request.options) });
        return provider.chooseOption(request);
      },
      callTools: (request) => {
        log(request);
        return provider.callTools(request);
      },
      generateObject: (request) => {
        log(request);
        return provider.generateObject(request);
      },
    }),
    flush: async () => {
      await Promise.all(pending.splice(0));
    },
  };
};
