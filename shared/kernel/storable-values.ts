import type { ValidationIssue } from './errors';
import { reservedMapKeys } from './schemas';

/**
 * What DynamoDB (through the AWS SDK's marshaller) stores faithfully: every JSON body is checked
 * before its schema sees it (`shared/http/storable-json.ts`), so free-form maps (grant conditions,
 * LLM parameters, tags) are refused with a 422 naming the field instead of failing the write with
 * a 500 or being altered on the way, and so is a JSON document another server hands over (an MCP
 * tool's input schema) before it is kept:
 * - numbers: the marshaller refuses integers beyond ±(2^53−1); DynamoDB refuses magnitudes
 *   below 1e-130;
 * - nesting: DynamoDB allows 32 levels per item, and a body is stored a few levels down;
 * - keys: DynamoDB refuses empty map keys, and `__proto__`, `constructor` and `prototype`
 *   change or break plain objects (a `__proto__` condition would vanish, widening a grant).
 */
export const maxBodyDepth = 16;
const smallestStorableMagnitude = 1e-130;

const numberProblem = (value: number): string | undefined => {
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return 'Numbers must lie between -(2^53-1) and 2^53-1.';
  if (value !== 0 && Math.abs(value) < smallestStorableMagnitude)
    return 'Non-zero numbers must be at least 1e-130 in magnitude.';
  return undefined;
};

const keyProblem = (key: string): string | undefined => {
  if (key === '') return 'Keys must not be empty.';
  if (reservedMapKeys.has(key)) return `'${key}' is a reserved key.`;
  return undefined;
};

export const unstorableIssues = (root: unknown, rootLoc: (string | number)[] = ['body']): ValidationIssue[] => {
  const issues: ValidationIssue[] = [];
  const visit = (value: unknown, loc: (string | number)[]) => {
    if (typeof value === 'number') {
      const problem = numberProblem(value);
      if (problem) issues.push({ loc, msg: problem, type: 'value_error' });
      return;
    }
    if (value === null || typeof value !== 'object') return;
    if (loc.length > maxBodyDepth) {
      issues.push({ loc, msg: `Values may be nested at most ${maxBodyDepth} levels deep.`, type: 'value_error' });
      return;
    }
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, [...loc, index]);
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      const problem = keyProblem(key);
      if (problem) issues.push({ loc: [...loc, key], msg: problem, type: 'value_error' });
      else visit(item, [...loc, key]);
    }
  };
  visit(root, rootLoc);
  return issues;
};
