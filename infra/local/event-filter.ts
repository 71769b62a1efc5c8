import type { StreamEventPattern } from '#shared/kernel/table-stream';

/**
 * Lambda event filtering, as an event source mapping applies its `FilterCriteria` before batching
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html), for the subset of
 * patterns the platform declares: nested fields whose leaves list the values a field may equal. A
 * record matches a pattern when every leaf's field exists and equals one of its values (a list
 * field: any of its elements does); it is delivered when it matches any of the patterns, or when
 * there are none. Content filters (`prefix`, `exists`, `numeric`, ...) are refused, not ignored.
 */
const matches = (value: unknown, pattern: StreamEventPattern): boolean =>
  Object.entries(pattern).every(([field, expected]) => {
    const actual = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[field] : undefined;
    if (!Array.isArray(expected)) return matches(actual, expected as StreamEventPattern);
    for (const allowed of expected)
      if (allowed !== null && typeof allowed === 'object')
        throw new Error(`event filter ${JSON.stringify(allowed)}: only lists of values run locally`);
    if (actual === undefined) return false;
    return (Array.isArray(actual) ? actual : [actual]).some((element) => expected.includes(element));
  });

export const passesFilters = (record: unknown, filters: readonly StreamEventPattern[] | undefined): boolean =>
  !filters?.length || filters.some((pattern) => matches(record, pattern));
