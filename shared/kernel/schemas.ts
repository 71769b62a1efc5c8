import { z } from 'zod';

/** Text that is trimmed before the non-empty check, so whitespace alone is rejected. */
export const strippedText = z.string().trim().min(1);

/** 24-character lowercase hexadecimal record id. */
export const objectId = z.string().regex(/^[a-f0-9]{24}$/, 'must be a 24-character lowercase hexadecimal id');

export const organizationPath = z.object({
  organization: z.string().min(1).max(128).describe('The organization ID.'),
});

/**
 * Headers accepted on every operation. The spec names the cluster header
 * `x-database-cluster-name`; the vendor's description names it `x-mongo-cluster-name`.
 * Both are accepted. Header names are lower-cased by the HTTP layer before validation.
 */
export const commonHeaders = z.object({
  'x-database-cluster-name': z.string().nullish(),
  'x-mongo-cluster-name': z.string().nullish(),
  'sec-websocket-protocol': z.string().nullish(),
});

/** The cluster name from either spelling of the header. */
export const clusterName = (headers: z.infer<typeof commonHeaders>): string | undefined =>
  headers['x-database-cluster-name'] ?? headers['x-mongo-cluster-name'] ?? undefined;

export const timestamp = z.iso.datetime({ offset: true }).describe('ISO 8601 date-time');

/** A number in E.164 form, as Twilio writes `To` and `From`: `+`, a country code, at most 15 digits. */
export const e164Number = z
  .string()
  .regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 phone number, e.g. +14155550100')
  .describe('The phone number in E.164 form.');

/**
 * How a call is handed to a person: `cold`, connected at once; `warm`, the person first hears a
 * summary. Said by the transfer operation and by the agent's handover (a state's or a dynamic
 * behavior's `transfer`).
 */
export const transferModes = ['cold', 'warm'] as const;
export type TransferMode = (typeof transferModes)[number];

/** A number as a query string writes it: decimal digits, a sign and a fraction at most. */
const decimalText = /^\s*[+-]?\d+(\.\d+)?\s*$/;

/**
 * A number read from a query parameter: decimal text becomes the number `schema` checks; any
 * other text (empty, `0x10`, `1e3`, `Infinity`) or a repeated parameter stays as it came, and the
 * schema refuses it (422), as the reference's clients expect. (`z.coerce.number()` would read
 * `''` as 0 and `0x10` as 16.)
 */
export const queryNumber = <T extends z.ZodType<number>>(schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && decimalText.test(value) ? Number(value) : value), schema);

/** Continuation tokens are integers for the reference's clients, but each is an opaque handle to a stored cursor. */
export const cursorHandle = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

export const continuationToken = queryNumber(cursorHandle)
  .prefault(0)
  .describe(
    'Opaque: 0 or absent for the first page, otherwise the continuation_token of the previous page of the same list (same filters), for an hour. Any other value answers 400.',
  );

/**
 * A list's paging parameters, spread into its query: `limit`, from 1 to `max` (`fallback` when
 * absent), and the `continuation_token` of the page before.
 */
export const pageQuery = (max: number, fallback: number, description?: string) => {
  const limit = queryNumber(z.number().int().min(1).max(max)).prefault(fallback);
  return {
    limit: description === undefined ? limit : limit.describe(description),
    continuation_token: continuationToken,
  };
};

export const pagedResponse = <T extends z.ZodRawShape>(shape: T) =>
  z.object({
    ...shape,
    has_more: z.boolean(),
    continuation_token: cursorHandle
      .min(1)
      .nullable()
      .describe(
        'An opaque handle to pass as continuation_token for the next page, valid for an hour; null on the last page.',
      ),
  });

/** A query parameter that may repeat (`?id=a&id=b`); a single value is lifted to an array. */
export const queryArray = <T extends z.ZodType>(item: T) =>
  z.preprocess((value) => (value === undefined || Array.isArray(value) ? value : [value]), z.array(item)).optional();

/** Booleans in a query string arrive as text. */
export const queryBoolean = z
  .enum(['true', 'false', 'True', 'False', '1', '0'])
  .transform((value) => value === 'true' || value === 'True' || value === '1');

/** Keys and values may hold only letters, digits, underscores and spaces. */
const tagText = z
  .string()
  .trim()
  .min(1)
  .regex(/^[\w\s]+$/, 'may contain only letters, digits, underscores and spaces');
/** Tags as requests give them: a map of at most 20 entries. */
export const tagsInput = z
  .record(tagText, tagText.nullable())
  .refine((tags) => Object.keys(tags).length <= 20, 'at most 20 tags');

export const tagList = z.array(z.object({ key: z.string(), value: z.string().nullable() }));
export const tagMap = z.record(z.string(), z.string().nullable());

export const creatorInfo = z.object({ org_id: z.string(), user_id: z.string() });

/** The optimistic check of version-creating operations. */
export const expectedVersion = queryNumber(z.number().int().positive())
  .optional()
  .describe('If given, the call fails with 409 unless the new version gets exactly this number.');

export const headListQuery = (limit: z.ZodType<number>) =>
  z.object({
    deprecated: queryBoolean.optional().describe('Whether the record is deprecated.'),
    id: queryArray(objectId).describe('The IDs of the records to filter for.'),
    limit,
    continuation_token: continuationToken,
  });

export const versionListQuery = z.object({
  version: z.string().optional().describe('A version number, `latest`, or an inclusive range `low-high`.'),
  ...pageQuery(10, 10, 'The maximum number of versions to return.'),
  sort_by: queryArray(z.string()).describe('`+version` or `-version`.'),
});

/**
 * Map keys a plain object cannot hold faithfully: `__proto__` vanishes (it sets the prototype),
 * and `constructor` or `prototype` break the AWS SDK's marshaller. Anything that becomes a key
 * of a stored map refuses them.
 */
export const reservedMapKeys: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A client-chosen name that becomes a key of a stored map. */
export const mapKeyName = z
  .string()
  .trim()
  .min(1)
  .max(40)
  .regex(/^[A-Za-z0-9_-]+$/, 'may contain only letters, digits, underscores and hyphens')
  .refine((name) => !reservedMapKeys.has(name), 'is a reserved name');
