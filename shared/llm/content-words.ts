// How the deterministic model reads text: content words as stems, negated words dropped, words
// of leaving folded into one stem. Shared by its choices and its metric judge.

const STOP_WORDS = new Set(
  (
    'a about am an and any are as at be been but by can could did do does for from had has have he her him his how i ' +
    'if im in into is it its ive just me my of on or our please so some than that the their them then there these ' +
    'they this to us was we were what when where which who will with would you your youre user want wants'
  ).split(' '),
);
const NEGATIONS = new Set('not no never dont doesnt didnt isnt arent wont cant havent hasnt without'.split(' '));
const NEGATION_SCOPE = 2;
const ENDING = 'end';

const stem = (word: string): string => {
  const base =
    word.length > 5 && word.endsWith('ing')
      ? word.slice(0, -3)
      : word.length > 4 && word.endsWith('ed')
        ? word.slice(0, -2)
        : word.length > 3 && word.endsWith('s') && !word.endsWith('ss')
          ? word.slice(0, -1)
          : word;
  // "leave"/"leaving" and "close"/"closed" should meet on one stem.
  return base.length > 3 && base.endsWith('e') ? base.slice(0, -1) : base;
};

const ENDING_STEMS = new Set(
  'bye goodbye farewell done finish end stop quit exit leave close conclude'.split(' ').map(stem),
);

// Content words of a text as stems, each with the word it came from. Words of leaving ("bye",
// "done", "that's all", "finishing"...) all become one stem, so a farewell meets an option about
// ending; words just after a negation ("not done yet") are dropped.
export const contentWords = (text: string): Map<string, string> => {
  const words = new Map<string, string>();
  const normalized = text.toLowerCase().replace(/['’]/g, '');
  const farewell = /\b(thats all|see you)\b/.exec(normalized);
  if (farewell) words.set(ENDING, farewell[0]);
  for (const clause of normalized.split(/[.,;:!?]+/)) {
    let negatedUntil = -1;
    clause
      .split(/[^a-z0-9]+/)
      .filter((word) => word !== '')
      .forEach((word, index) => {
        if (NEGATIONS.has(word)) negatedUntil = index + NEGATION_SCOPE;
        else if (index > negatedUntil && !STOP_WORDS.has(word)) {
          const stemmed = stem(word);
          const key = ENDING_STEMS.has(stemmed) ? ENDING : stemmed;
          if (!words.has(key)) words.set(key, word);
        }
      });
  }
  return words;
};
