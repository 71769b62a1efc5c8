import { z } from 'zod';

/** A tool version, `{major, minor, patch}` as the reference gives it. */
export const toolVersion = z.object({
  major: z.number().int().min(0),
  minor: z.number().int().min(0),
  patch: z.number().int().min(0),
});
export type ToolVersion = z.infer<typeof toolVersion>;

export const formatVersion = (version: ToolVersion): string => `${version.major}.${version.minor}.${version.patch}`;

export const compareVersions = (a: ToolVersion, b: ToolVersion): number =>
  a.major - b.major || a.minor - b.minor || a.patch - b.patch;

/** `1`, `1.2` or `1.2.3` (missing parts are 0), as PEP 440 release segments of tool versions. */
const parseRelease = (text: string): { parts: number[]; version: ToolVersion } | undefined => {
  if (!/^\d+(\.\d+){0,2}$/.test(text)) return undefined;
  const parts = text.split('.').map(Number);
  if (parts.some((part) => !Number.isSafeInteger(part))) return undefined;
  return { parts, version: { major: parts[0] ?? 0, minor: parts[1] ?? 0, patch: parts[2] ?? 0 } };
};

export const parseVersion = (text: string): ToolVersion | undefined => parseRelease(text.trim())?.version;

type Clause = (version: ToolVersion) => boolean;

/** Whether `version` starts with the release `prefix` (for `==1.*` and `~=`). */
const hasPrefix = (version: ToolVersion, prefix: number[]): boolean => {
  const parts = [version.major, version.minor, version.patch];
  return prefix.every((part, index) => parts[index] === part);
};

const clauseOf = (text: string): Clause | undefined => {
  const match = /^(~=|===|==|!=|<=|>=|<|>)?\s*([\d.]+)(\.\*)?$/.exec(text.trim());
  if (!match) return undefined;
  const [, operator = '==', releaseText = '', wildcard] = match;
  const release = parseRelease(releaseText);
  if (!release) return undefined;
  const { parts, version: bound } = release;
  if (wildcard) {
    if (operator === '==') return (version) => hasPrefix(version, parts);
    if (operator === '!=') return (version) => !hasPrefix(version, parts);
    return undefined;
  }
  switch (operator) {
    case '==':
    case '===':
      return (version) => compareVersions(version, bound) === 0;
    case '!=':
      return (version) => compareVersions(version, bound) !== 0;
    case '<':
      return (version) => compareVersions(version, bound) < 0;
    case '<=':
      return (version) => compareVersions(version, bound) <= 0;
    case '>':
      return (version) => compareVersions(version, bound) > 0;
    case '>=':
      return (version) => compareVersions(version, bound) >= 0;
    default:
      // `~=X.Y` means >= X.Y and == X.*; it needs at least two release parts.
      if (parts.length < 2) return undefined;
      return (version) => compareVersions(version, bound) >= 0 && hasPrefix(version, parts.slice(0, -1));
  }
};

/**
 * A version specifier in the Python packaging syntax (PEP 440), restricted to the release
 * segments tool versions have: comma-separated clauses with `==`, `!=`, `<`, `<=`, `>`, `>=`,
 * `~=`, `===` and `.*` wildcards; a bare version means `==`. Undefined when it does not parse.
 */
export const parseVersionConstraint = (text: string): ((version: ToolVersion) => boolean) | undefined => {
  const clauses = text.split(',').map(clauseOf);
  if (text.trim() === '' || clauses.some((clause) => clause === undefined)) return undefined;
  return (version) => clauses.every((clause) => (clause as Clause)(version));
};

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
