import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../kernel/errors';
import type { Operation } from '../kernel/operation';

export type RequestPart = 'path' | 'query' | 'header' | 'body';

/** Error types in the style FastAPI clients know (`missing`, `string_type`, ...). */
const issueType = (issue: z.core.$ZodIssue, input: unknown): string => {
  switch (issue.code) {
    case 'invalid_type':
      return input === undefined ? 'missing' : `${issue.expected}_type`;
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array' ? 'too_short' : 'greater_than_equal';
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array' ? 'too_long' : 'less_than_equal';
    case 'invalid_format':
      return issue.format === 'regex' ? 'string_pattern_mismatch' : `${issue.format}_format`;
    case 'invalid_value':
      return 'enum';
    case 'unrecognized_keys':
      return 'extra_forbidden';
    default:
      return 'value_error';
  }
};

const valueAt = (root: unknown, path: PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    root,
  );

export const toValidationIssues = (error: z.ZodError, part: RequestPart, input: unknown): ValidationIssue[] =>
  error.issues.map((issue) => {
    const value = valueAt(input, issue.path);
    const type = issueType(issue, value);
    return {
      loc: [part, ...issue.path.map((key) => (typeof key === 'number' ? key : String(key)))],
      msg: type === 'missing' ? 'Field required' : issue.message,
      type,
    };
  });

/** Parses one part of a request, turning zod's issues into a 422 `ValidationError`. */
export const parseRequestPart = <T extends z.ZodType>(schema: T, input: unknown, part: RequestPart): z.output<T> => {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(toValidationIssues(result.error, part, input));
  return result.data;
};

/** A parsed request part shared by the requests that send the same text: frozen, as they all read it. */
const frozen = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const field of Object.values(value)) frozen(field);
    Object.freeze(value);
  }
  return value;
};

/** The parts parsed lately, per schema, by the text of their input. */
const parsedParts = new WeakMap<z.ZodType, Map<string, unknown>>();
const partsKept = 64;

/**
 * {@link parseRequestPart} for a part whose input is a few strings (a path's parameters, a
 * query's): a request repeating one parsed lately (the same organization, the same page of a
 * list) gets the same value without parsing it again, which zod, its schemas many, took tens of
 * microseconds a request to do. Only valid parts are kept, and what is kept is frozen.
 */
export const parseRecentRequestPart = <T extends z.ZodType>(
  schema: T,
  input: Record<string, string | string[]>,
  part: RequestPart,
): z.output<T> => {
  const key = JSON.stringify(input);
  let parsed = parsedParts.get(schema);
  if (!parsed) {
    parsed = new Map();
    parsedParts.set(schema, parsed);
  }
  if (parsed.has(key)) return parsed.get(key) as z.output<T>;
  const value = frozen(parseRequestPart(schema, input, part));
  parsed.set(key, value);
  if (parsed.size > partsKept) parsed.delete(parsed.keys().next().value as string);
  return value;
};

/** Each operation's query parameter names, worked out on its first request. */
const declaredQueryNames = new WeakMap<Operation, ReadonlySet<string>>();

/**
 * A 422 issue (FastAPI's `extra_forbidden`) for each query parameter the operation does not
 * declare, unless it ignores them (`ignoresUndeclaredQuery`). Unknown headers stay accepted:
 * clients, SDKs and browsers send their own.
 */
export const undeclaredQueryIssues = (operation: Operation, query: Record<string, unknown>): ValidationIssue[] => {
  const issues: ValidationIssue[] = [];
  if (operation.ignoresUndeclaredQuery) return issues;
  let declared = declaredQueryNames.get(operation);
  for (const name in query) {
    if (!declared) {
      declared = new Set(Object.keys(operation.request.query?.shape ?? {}));
      declaredQueryNames.set(operation, declared);
    }
    if (!declared.has(name))
      issues.push({ loc: ['query', name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  }
  return issues;
};
