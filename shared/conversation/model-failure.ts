import type { ErrorEvent } from '../../events/stream-events';
import { logger } from '../aws/observability';
import { DomainError } from '../kernel/errors';
import { LlmError } from '../llm/provider';

/** A failed model call as the status clients see: 503 when retrying may help, else 502. */
export const modelFailure = (error: LlmError): DomainError => {
  logger.warn('model call failed', { error });
  return error.retryable
    ? new DomainError(503, 'The language model is unavailable right now; retry.', { cause: error })
    : new DomainError(502, 'The language model gave an unusable answer; retry.', { cause: error });
};

/** The stream's last word on a failure; the connection closes right after it. */
export const errorEventOf = (error: unknown): ErrorEvent => {
  const failure = error instanceof LlmError ? modelFailure(error) : error;
  if (failure instanceof DomainError) {
    return { type: 'error', http_error_code: failure.statusCode, error_description: failure.message };
  }
  logger.error('conversation stream failed', { error: failure as Error });
  return { type: 'error', http_error_code: 500, error_description: 'Internal server error.' };
};
