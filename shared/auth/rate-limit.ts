import { updateItem } from '../data/table';
import { RateLimitedError } from '../kernel/errors';
import type { Caller } from '../kernel/caller';

/**
 * Fixed one-minute windows counted in DynamoDB, so every instance of every function shares
 * the count: one UpdateItem adds 1 under the condition that the count is below the limit.
 * Counters expire (TTL) shortly after their window.
 */
const windowSeconds = 60;

const counterKey = (orgId: string, subject: string, operationId: string, windowStart: number) => ({
  pk: `ORG#${orgId}#RATELIMIT#${subject}`,
  sk: `${operationId}#${windowStart}`,
});

export interface RateLimitArgs {
  /** Organization the subject belongs to (its key prefix). */
  orgId: string;
  /** Who is limited: a user id, or for sign-in the key and user asked for. */
  subject: string;
  operationId: string;
  limit: number;
  now?: number;
}

/** Counts one request; returns the X-RateLimit-* headers or throws a 429 carrying them. */
export const consumeRateLimit = async (args: RateLimitArgs): Promise<Record<string, string>> => {
  const now = Math.floor((args.now ?? Date.now()) / 1000);
  const windowStart = now - (now % windowSeconds);
  const reset = windowStart + windowSeconds;
  const headers = (remaining: number) => ({
    'x-ratelimit-limit': String(args.limit),
    'x-ratelimit-remaining': String(Math.max(0, remaining)),
    'x-ratelimit-reset': String(reset),
  });
  const result = await updateItem(
    {
      Key: counterKey(args.orgId, args.subject, args.operationId, windowStart),
      UpdateExpression: 'SET entity = :entity, expires_at_epoch = :expires ADD request_count :one',
      ConditionExpression: 'attribute_not_exists(request_count) OR request_count < :limit',
      ExpressionAttributeValues: { ':one': 1, ':limit': args.limit, ':expires': reset + windowSeconds, ':entity': 'rate-limit' },
    },
    () => new RateLimitedError(args.limit, Math.max(1, reset - now), headers(0)),
  );
  return headers(args.limit - Number(result?.request_count ?? args.limit));
};

/**
 * The per-user, per-operation limit the request pipeline applies to authenticated callers.
 * A platform operator's requests are counted per organization acted on: work on one tenant
 * does not throttle work on another (creating organizations for many tenants in a row).
 */
export const enforceRateLimit = (args: { caller: Caller; operationId: string; limit: number }): Promise<Record<string, string>> =>
  consumeRateLimit({
    orgId: args.caller.homeOrgId,
    subject: args.caller.isPlatformOperator ? `${args.caller.userId}@${args.caller.orgId}` : args.caller.userId,
    operationId: args.operationId,
    limit: args.limit,
  });
