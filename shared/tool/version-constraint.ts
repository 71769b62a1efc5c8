import { z } from 'zod';

/** A tool version, `{major, minor, patch}` as the reference gives it. */
export const toolVersion = z.object({
  major: z.number().int().min(0),
  minor: z.number().int().min(0),
  patch: z.number().int().min(0),
});
export type ToolVersion = z.infer<typeof toolVersion>;

export const formatVersion = (version: ToolVersion): string => `${version.major}.${version.minor}.${version.patch}`;

/** `1`, `1.2` or `1.2.3` (missing parts are 0): how a version is named in a path. */
export const parseVersion = (text: string): ToolVersion | undefined => {
  const trimmed = text.trim();
  if (!/^\d+(\.\d+){0,2}$/.test(trimmed)) return undefined;
  const parts = trimmed.split('.').map(Number);
  if (parts.some((part) => !Number.isSafeInteger(part))) return undefined;
  return { major: parts[0] ?? 0, minor: parts[1] ?? 0, patch: parts[2] ?? 0 };
};

/*
 * Version specifiers (PEP 440), parsed and matched the way the reference's `packaging` library
 * does, for the release versions tools have. The one parser of constraints: the state machine's
 * and dynamic behavior sets' validation and the tool resolver all use it, so a constraint that
 * validates is one the resolver can match.
 */

/** A PEP 440 version, as `packaging` orders it. */
interface Pep440Version {
  epoch: number;
  release: number[];
  /** `a`/`alpha` 0, `b`/`beta` 1, `c`/`rc`/`pre`/`preview` 2, with its number. */
  pre?: [number, number];
  post?: number;
  dev?: number;
  local?: string;
}

const versionSyntax = new RegExp(
  String.raw`^v?(?:(?<epoch>[0-9]+)!)?(?<release>[0-9]+(?:\.[0-9]+)*)` +
    `(?:[-_.]?(?<preLabel>alpha|beta|preview|pre|a|b|c|rc)[-_.]?(?<pre>[0-9]+)?)?` +
    `(?:-(?<implicitPost>[0-9]+)|[-_.]?(?<postLabel>post|rev|r)[-_.]?(?<post>[0-9]+)?)?` +
    `(?:[-_.]?(?<devLabel>dev)[-_.]?(?<dev>[0-9]+)?)?` +
    String.raw`(?:\+(?<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`,
  'i',
);

const preRanks: Record<string, number> = { a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2 };

const parsePep440 = (text: string): Pep440Version | undefined => {
  const groups = versionSyntax.exec(text)?.groups;
  if (!groups) return undefined;
  const number = (value: string | undefined) => Number(value ?? 0);
  return {
    epoch: number(groups.epoch),
    release: (groups.release ?? '0').split('.').map(Number),
    pre: groups.preLabel ? [preRanks[groups.preLabel.toLowerCase()] ?? 2, number(groups.pre)] : undefined,
    post:
      groups.implicitPost !== undefined || groups.postLabel ? number(groups.implicitPost ?? groups.post) : undefined,
    dev: groups.devLabel ? number(groups.dev) : undefined,
    local: groups.local,
  };
};

const asPep440 = (version: ToolVersion): Pep440Version => ({
  epoch: 0,
  release: [version.major, version.minor, version.patch],
});

/** `packaging`'s sort key: dev < pre-release < release < post-release; trailing zeros do not count. */
const orderKey = (version: Pep440Version): number[] => {
  const release = [...version.release];
  while (release.length > 1 && release.at(-1) === 0) release.pop();
  const pre = version.pre ?? (version.post === undefined && version.dev !== undefined ? [-Infinity, 0] : [Infinity, 0]);
  return [
    version.epoch,
    ...release,
    // Release lengths differ: a separator below every segment keeps `1` before `1.1`.
    -1,
    ...pre,
    version.post ?? -Infinity,
    version.dev ?? Infinity,
  ];
};

const compare = (a: Pep440Version, b: Pep440Version): number => {
  const [left, right] = [orderKey(a), orderKey(b)];
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const difference = (left[index] ?? -Infinity) - (right[index] ?? -Infinity);
    if (difference !== 0 && !Number.isNaN(difference)) return Math.sign(difference);
  }
  return 0;
};

/** Whether `version` lies in the release prefix (`==1.2.*`), padding its release with zeros. */
const inPrefix = (version: Pep440Version, prefix: Pep440Version): boolean =>
  version.epoch === prefix.epoch && prefix.release.every((part, index) => (version.release[index] ?? 0) === part);

type Clause = (version: ToolVersion) => boolean;

const clauseOf = (text: string): Clause | undefined => {
  const match = /^\s*(===|==|!=|~=|<=|>=|<|>)\s*(.*?)\s*$/.exec(text);
  if (!match) return undefined;
  const [, operator, operand = ''] = match;
  if (operator === '===') {
    // Arbitrary equality compares the text itself.
    if (!/^[^\s;)]*$/.test(operand)) return undefined;
    return (version) => formatVersion(version) === operand.toLowerCase();
  }
  if ((operator === '==' || operator === '!=') && operand.endsWith('.*')) {
    const prefix = parsePep440(operand.slice(0, -2));
    if (!prefix || prefix.pre || prefix.post !== undefined || prefix.dev !== undefined || prefix.local)
      return undefined;
    return operator === '=='
      ? (version) => inPrefix(asPep440(version), prefix)
      : (version) => !inPrefix(asPep440(version), prefix);
  }
  const bound = parsePep440(operand);
  if (!bound || (bound.local && operator !== '==' && operator !== '!=')) return undefined;
  // A release has no local label: it equals a bound only when the bound has none either.
  const equal = (version: ToolVersion) => !bound.local && compare(asPep440(version), bound) === 0;
  switch (operator) {
    case '==':
      return equal;
    case '!=':
      return (version) => !equal(version);
    case '<':
      return (version) => compare(asPep440(version), bound) < 0;
    case '<=':
      return (version) => compare(asPep440(version), bound) <= 0;
    case '>':
      return (version) => compare(asPep440(version), bound) > 0;
    case '>=':
      return (version) => compare(asPep440(version), bound) >= 0;
    default: {
      // `~=X.Y.Z` means `>=X.Y.Z, ==X.Y.*`; it needs at least two release segments.
      if (bound.release.length < 2) return undefined;
      const prefix = { epoch: bound.epoch, release: bound.release.slice(0, -1) };
      return (version) => compare(asPep440(version), bound) >= 0 && inPrefix(asPep440(version), prefix);
    }
  }
};

/**
 * A version specifier set in the Python packaging syntax (PEP 440): comma-separated clauses
 * with `==`, `!=`, `<`, `<=`, `>`, `>=`, `~=`, `===` and `.*` prefixes, matched against tool
 * versions. Blank clauses are skipped, so an empty constraint allows every version, as in the
 * reference. Undefined when it does not parse (a bare version, `^1.2`, `latest`).
 */
export const parseVersionConstraint = (text: string): ((version: ToolVersion) => boolean) | undefined => {
  const clauses = text
    .split(',')
    .filter((clause) => clause.trim() !== '')
    .map(clauseOf);
  if (clauses.some((clause) => clause === undefined)) return undefined;
  return (version) => clauses.every((clause) => (clause as Clause)(version));
};

export const isValidVersionConstraint = (text: string): boolean => parseVersionConstraint(text) !== undefined;

/** A zod string that is a valid constraint, for path and query parameters. */
export const versionConstraint = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (text) => parseVersionConstraint(text) !== undefined,
    'must be a version specifier such as `>=1.0.0,<2`, `==1.*` or `~=1.2`',
  );

/** The version after `latest` for a bump (the first version is 1.0.0, whatever the bump). */
export const bumpVersion = (latest: ToolVersion | null, bump: 'major' | 'minor' | 'patch'): ToolVersion => {
  if (!latest) return { major: 1, minor: 0, patch: 0 };
  if (bump === 'major') return { major: latest.major + 1, minor: 0, patch: 0 };
  if (bump === 'minor') return { major: latest.major, minor: latest.minor + 1, patch: 0 };
  return { ...latest, patch: latest.patch + 1 };
};
