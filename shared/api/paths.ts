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

/** Each of the operation's own parameter names with the name its canonical resource gives that position. */
export const canonicalParameterNames = (operation: Operation, resource: string): Map<string, string> => {
  const canonical = segmentsOf(resource);
  const names = new Map<string, string>();
  segmentsOf(operation.path).forEach((segment, index) => {
    const canonicalSegment = canonical[index];
    if (isParameter(segment) && canonicalSegment && isParameter(canonicalSegment)) {
      names.set(parameterName(segment), parameterName(canonicalSegment));
    }
  });
  return names;
};

/** Path parameters under their own names (`canonicalParameterNames`), from those the resource named. */
export const renamedParameters = (
  names: Map<string, string>,
  pathParameters: Record<string, string | undefined>,
): Record<string, string> => {
  const parameters: Record<string, string> = {};
  for (const [own, canonical] of names) {
    const value = pathParameters[canonical];
    if (value !== undefined) parameters[own] = value;
  }
  return parameters;
};

/**
 * Of the resources matching one request path, those API Gateway would route to: a fixed
 * segment wins over a parameter at the same position (`/user/signin` over `/user/{id}`).
 */
export const mostSpecific = <T extends { resource: string }>(matches: readonly T[]): T[] => {
  const rank = (resource: string) =>
    segmentsOf(resource)
      .map((segment) => (isParameter(segment) ? '0' : '1'))
      .join('');
  const best = matches
    .map((match) => rank(match.resource))
    .sort()
    .at(-1);
  return matches.filter((match) => rank(match.resource) === best);
};

export interface PathMatch {
  resource: string;
  pathParameters: Record<string, string>;
}

/** Matches a request path, given as its segments, against one resource path. */
export type ResourceMatcher = (requestSegments: readonly string[]) => PathMatch | undefined;

/** A resource path split once, for matching many request paths. */
export const resourceMatcher = (resource: string): ResourceMatcher => {
  const template = segmentsOf(resource);
  return (actual: readonly string[]): PathMatch | undefined => {
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
};

/** Matches a concrete request path against a canonical resource path (trailing slash optional). */
export const matchResource = (resource: string, requestPath: string): PathMatch | undefined =>
  resourceMatcher(resource)(segmentsOf(requestPath));

/** The greedy proxy resource API Gateway routes a self-routed group through, and how it is recognised. */
export const greedySegment = '{proxy+}';
export const isGreedyResource = (resource: string): boolean => resource.endsWith(`/${greedySegment}`);

/**
 * A self-routed group's path prefix: the leading segments every one of its operations shares
 * (`/app/{organization}`), with their canonical parameter names.
 */
export const sharedResourcePrefix = (resources: readonly string[]): string => {
  const [first = [], ...rest] = resources.map(segmentsOf);
  let length = 0;
  while (length < first.length && rest.every((segments) => segments[length] === first[length])) length++;
  return `/${first.slice(0, length).join('/')}`;
};

/**
 * Of the routes, each with its path's matcher (`resourceMatcher`, built once), those a concrete
 * request path matches, with their parameters: how the local gateway routes a request, and how a
 * self-routed group's function finds the operation behind its greedy resource.
 */
export const operationsMatching = <T extends { match: ResourceMatcher }>(
  routes: readonly T[],
  requestPath: string,
): { route: T; resource: string; pathParameters: Record<string, string> }[] => {
  const requestSegments = segmentsOf(requestPath);
  return mostSpecific(
    routes.flatMap((route) => {
      const match = route.match(requestSegments);
      return match ? [{ route, ...match }] : [];
    }),
  );
};
