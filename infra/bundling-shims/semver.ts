/**
 * Stands in for `semver` in Lambda bundles. The only user is the X-Ray SDK's patcher for
 * AWS SDK v2 (which this platform never loads), and it calls `gte` alone; the full
 * package would add ~29 KiB to every bundle.
 */
const parts = (version: string): number[] =>
  version
    .replace(/^v/, '')
    .split(/[.+-]/)
    .slice(0, 3)
    .map((part) => Number.parseInt(part, 10) || 0);

export const gte = (version: string, minimum: string): boolean => {
  const [a, b] = [parts(version), parts(minimum)];
  for (let index = 0; index < 3; index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference > 0;
  }
  return true;
};

export default { gte };
