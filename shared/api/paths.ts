import type { Operation } from '../kernel/operation';

/**
 * API Gateway REST resources have no trailing slashes and allow one parameter name per
 * position (`/x/{a}` and `/x/{b}` cannot both exist), while the reference's paths have
 * both. Each operation therefore gets a canonical resource path: trailing slash dropped,
 * and each parameter named as the first operation in the table names that position.
 * The handler maps parameters back to the operation's own names by position.
 */
const segmentsOf = (path: string): string[] => path.replace(/\/+$/, '').split('/').filter(Boolean);
const isParameter = (segment: string): boolean => segment.startsWith('{') && segment.endsWith('}');
const parameterName = (segment: string): string => segment.slice(1, -1);

/** The shape of a path: parameters anonymous, no trailing slash. Equal shapes are the same resource. */
export const routeShape = (path: string): string =>
  `/${segmentsOf(path)
    .map((segment) => (isParameter(segment) ? '{}' : segment))
    .join('/')}`;

export const canonicalResourcePaths = (operations: readonly Operation[]): Map<Operation, string> => {
  const namesByPrefix = new Map<string, string>();
  const result = new Map<Operation, string>();
  for (const operation of operations) {
    const canonical: string[] = [];
    for (const segment of segmentsOf(operation.path)) {
      if (!isParameter(segment)) {
        canonical.push(segment);
        continue;
      }
      const prefix = routeShape(`/${[...canonical, '{}'].join('/')}`);
      const name = namesByPrefix.get(prefix) ?? parameterName(segment);
      namesByPrefix.set(prefix, name);
      canonical.push(`{${name}}`);
    }
    result.set(operation, `/${canonical.join('/')}`);
  }
  return result;
};

/** The operation's own parameter names, read from a request on its canonical resource. */
export const operationPathParameters = (
  operation: Operation,
  resource: string,
  pathParameters: Record<string, string | undefined>,
): Record<string, string> => {
  const own = segmentsOf(operation.path);
  const canonical = segmentsOf(resource);
  const parameters: Record<string, string> = {};
  own.forEach((segment, index) => {
    const canonicalSegment = canonical[index];
    if (isParameter(segment) && canonicalSegment && isParameter(canonicalSegment)) {
      const value = pathParameters[parameterName(canonicalSegment)];
      if (value !== undefined) parameters[parameterName(segment)] = value;
    }
  });
  return parameters;
};

/**
 * Orders resources as API Gateway chooses among those matching a path: segment by segment, a
 * literal beats a parameter (`/metric/evaluate` before `/metric/{metric_id}`). Lower sorts first.
 */
export const resourceSpecificity = (resource: string): string =>
  segmentsOf(resource)
    .map((segment) => (isParameter(segment) ? '1' : '0'))
    .join('');

export interface PathMatch {
  resource: string;
  pathParameters: Record<string, string>;
}

/** Matches a concrete request path against a canonical resource path (trailing slash optional). */
export const matchResource = (resource: string, requestPath: string): PathMatch | undefined => {
  const template = segmentsOf(resource);
  const actual = segmentsOf(requestPath);
  if (template.length !== actual.length) return undefined;
  const pathParameters: Record<string, string> = {};
  for (const [index, segment] of template.entries()) {
    const value = actual[index] as string;
    if (isParameter(segment)) {
      try {
        pathParameters[parameterName(segment)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (segment !== value) {
      return undefined;
    }
  }
  return { resource, pathParameters };
};
