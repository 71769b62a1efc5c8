/*
 * Tool versions are selected with Python packaging version specifiers (PEP 440). These
 * patterns follow the grammar of the reference implementation (the `packaging` library),
 * so a constraint is accepted here exactly when the reference would accept it.
 */
const epoch = '(?:[0-9]+!)?';
const release = String.raw`[0-9]+(?:\.[0-9]+)*`;
const releaseOfTwoOrMore = String.raw`[0-9]+(?:\.[0-9]+)+`;
const preRelease = '(?:[-_.]?(?:alpha|beta|preview|pre|a|b|c|rc)[-_.]?[0-9]*)?';
const postRelease = '(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?';
const devRelease = '(?:[-_.]?dev[-_.]?[0-9]*)?';
const local = String.raw`(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?`;
const suffixes = preRelease + postRelease + devRelease;

const clauseAlternatives = [
  // Arbitrary equality compares raw text, so almost anything goes.
  String.raw`===\s*[^\s;)]*`,
  // Only (non-)equality may use a `.*` prefix match or a local version label.
  String.raw`(?:==|!=)\s*v?${epoch}${release}(?:\.\*|${suffixes}${local})`,
  // Compatible release needs at least two release segments, e.g. `~=1.4`.
  String.raw`~=\s*v?${epoch}${releaseOfTwoOrMore}${suffixes}`,
  String.raw`(?:<=|>=|<|>)\s*v?${epoch}${release}${suffixes}`,
];

const clausePattern = new RegExp(String.raw`^\s*(?:${clauseAlternatives.join('|')})\s*$`, 'i');

/**
 * Whether `constraint` is a valid comma-separated set of version specifiers such as
 * `>=1.2,<2` or `==1.*`. Blank clauses are skipped as in the reference, so an empty
 * constraint is valid and allows any version.
 */
export const isValidVersionConstraint = (constraint: string): boolean =>
  constraint
    .split(',')
    .filter((clause) => clause.trim() !== '')
    .every((clause) => clausePattern.test(clause));
