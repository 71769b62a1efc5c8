/*
 * A value carried in a prompt as a fenced JSON block under a heading: the judge's metric, the
 * simulated user's brief. The model reads it; the built-in stand-ins read it back.
 */

const fence = '```';

/** The lines of the section: the heading, then the value as a fenced JSON block. */
export const jsonSection = (heading: string, value: unknown): string[] => [
  heading,
  `${fence}json`,
  JSON.stringify(value),
  fence,
];

/** What {@link jsonSection} wrote under `heading` in `text`; undefined when there is none or it is not JSON. */
export const readJsonSection = (text: string, heading: string): unknown => {
  const opening = `${heading}\n${fence}json\n`;
  const start = text.indexOf(opening);
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start + opening.length).split(`\n${fence}`)[0] ?? '');
  } catch {
    return undefined;
  }
};
