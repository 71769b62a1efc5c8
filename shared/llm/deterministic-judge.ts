import { contentWords } from './content-words';
import type { JudgePromptInput, TranscriptLine } from './judge-prompt';

/** What the deterministic model answers to a judge prompt, in the shape of `judgeSchema`. */
export interface RuleJudgement {
  value: boolean | number | string;
  references: string[];
  justification: string;
}

const MAX_REFERENCES = 5;
const DISCLAIMER = 'Rule-based judgement of the built-in deterministic model (not a language model)';

/** The transcript lines sharing a content word with `text`, each with the words shared. */
const mentioning = (transcript: TranscriptLine[], text: string): { line: TranscriptLine; words: string[] }[] => {
  const wanted = contentWords(text);
  return transcript.flatMap((line) => {
    const words = [...contentWords(line.text)].filter(([key]) => wanted.has(key)).map(([, word]) => word);
    return words.length > 0 ? [{ line, words }] : [];
  });
};

const quoted = (words: string[]): string => [...new Set(words)].map((word) => `"${word}"`).join(', ');

const roundedToHundredths = (value: number): number => Math.round(value * 100) / 100;

/**
 * Judges a metric by fixed rules over the transcript; the same prompt always gives the same judgement.
 * Evidence is the messages that share a content word (see `content-words.ts`) with the metric's
 * name or description.
 *
 * - boolean: true when there is evidence, false otherwise.
 * - numerical: the lower bound plus the share of messages that are evidence times the range
 *   (rounded to hundredths, so always within the bounds).
 * - categorical: the category whose words the most messages mention (the first on a tie, and
 *   the first when no message mentions any).
 *
 * References are the evidence (at most five messages, all from the transcript); the
 * justification states the rule, the counts and the words matched.
 */
export const judgeByRules = ({ metric, transcript }: JudgePromptInput): RuleJudgement => {
  const evidence = mentioning(transcript, `${metric.name} ${metric.description}`);
  const references = evidence.slice(0, MAX_REFERENCES).map(({ line }) => line.id);
  const counted = `${evidence.length} of ${transcript.length} messages share words with the metric's name or description`;
  const matched = evidence.length > 0 ? ` (${quoted(evidence.flatMap(({ words }) => words))})` : '';
  const value = metric.value;
  switch (value.type) {
    case 'boolean':
      return {
        value: evidence.length > 0,
        references,
        justification: `${DISCLAIMER}: ${counted}${matched}; the value is true when at least one does.`,
      };
    case 'numerical': {
      const share = transcript.length === 0 ? 0 : evidence.length / transcript.length;
      const scaled = roundedToHundredths(value.lower_bound + share * (value.upper_bound - value.lower_bound));
      return {
        value: Math.min(value.upper_bound, Math.max(value.lower_bound, scaled)),
        references,
        justification: `${DISCLAIMER}: ${counted}${matched}; the value is the lower bound plus that share of the range.`,
      };
    }
    case 'categorical': {
      const ranked = value.categories.map((category) => ({ category, mentions: mentioning(transcript, category) }));
      const best = ranked.reduce((top, candidate) =>
        candidate.mentions.length > top.mentions.length ? candidate : top,
      );
      if (best.mentions.length === 0) {
        return {
          value: best.category,
          references,
          justification: `${DISCLAIMER}: no message mentions the words of any category, so the first category is taken.`,
        };
      }
      return {
        value: best.category,
        references: best.mentions.slice(0, MAX_REFERENCES).map(({ line }) => line.id),
        justification:
          `${DISCLAIMER}: ${best.mentions.length} of ${transcript.length} messages mention ` +
          `${quoted(best.mentions.flatMap(({ words }) => words))}, more than any other category's words.`,
      };
    }
  }
};
