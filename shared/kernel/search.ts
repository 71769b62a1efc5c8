const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * How well a record matches a search query, over its name and its other searchable text: for
 * each query word, 3 when the name has it as a word, 2 when the name contains it, 1 when the
 * text contains it; plus 5 when the name contains the whole query. 0 means no match.
 */
export const searchRelevance = (query: string, name: string, text: string): number => {
  const lowerName = name.toLowerCase();
  const nameWords = new Set(words(lowerName));
  const lowerText = text.toLowerCase();
  const phrase = query.trim().toLowerCase();
  return words(phrase).reduce(
    (score, word) =>
      score + (nameWords.has(word) ? 3 : lowerName.includes(word) ? 2 : lowerText.includes(word) ? 1 : 0),
    lowerName.includes(phrase) ? 5 : 0,
  );
};
