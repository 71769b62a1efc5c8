import type { ErrorEvent } from '../../events/stream-events';
import { logger } from '../aws/observability';
import { DomainError } from '../kernel/errors';
import { LlmError } from '../llm/provider';

/** What clients are told of a failed model call and of an unexpected failure: nothing of the agent's (no model, state or tool). */
export const plainFailures = {
  modelUnavailable: 'The language model is unavailable right now; retry.',
  modelUnusable: 'The language model gave an unusable answer; retry.',
  internal: 'Internal server error.',
} as const;

/** A failed model call as the status clients see: 503 when retrying may help, else 502. */
export const modelFailure = (error: LlmError): DomainError => {
  logger.warn('model call failed', { error });
  return error.retryable
    ? new DomainError(503, plainFailures.modelUnavailable, { cause: error })
    : new DomainError(502, plainFailures.modelUnusable, { cause: error });
};

/** The stream's last word on a failure; the connection closes right after it. */
export const errorEventOf = (error: unknown): ErrorEvent => {
  const failure = error instanceof LlmError ? modelFailure(error) : error;
  if (failure instanceof DomainError) {
    return { type: 'error', http_error_code: failure.statusCode, error_description: failure.message };
  }
  logger.error('conversation stream failed', { error: failure as Error });
  return { type: 'error', http_error_code: 500, error_description: plainFailures.internal };
};
