import { performance } from 'node:perf_hooks';
import { type MatchableBehavior, rankBehaviors } from '#shared/conversation/behavior-matching';
import { createLexicalEmbedding, normalized } from '#shared/llm/embedding';

/**
 * What matching adds to a turn, on top of the embedding and model calls: ranking 500 stored
 * trigger vectors (10 sets of 50 triggers, the most a version holds) against the message
 * vector. Measured with the built-in embedding's 512 dimensions and with 1024 (Titan v2, Cohere).
 */
const triggersPerService = 500;
const triggersPerSet = 50;
const rounds = 200;
const warmUpRounds = 50;
const targetMs = 10;

const randomVector = (dimensions: number): Float32Array =>
  normalized(Array.from({ length: dimensions }, () => Math.random() * 2 - 1));

const behaviorsOf = (dimensions: number): MatchableBehavior[] =>
  Array.from({ length: triggersPerService / triggersPerSet }, (_, set) => ({
    setId: set.toString(16).padStart(24, '0'),
    version: 1,
    triggers: Array.from({ length: triggersPerSet }, (__, index) => `trigger ${index}`),
    actions: [],
    vectors: Array.from({ length: triggersPerSet }, () => randomVector(dimensions)),
  }));

export interface MatchingFigure {
  dimensions: number;
  p50Ms: number;
  p99Ms: number;
}

export const measureMatching = async (): Promise<MatchingFigure[]> => {
  // The lexical embedding's own size, read from a vector it makes.
  const [lexical] = await createLexicalEmbedding().embed(['a sample message']);
  return [lexical?.length ?? 512, 1024].map((dimensions) => {
    const behaviors = behaviorsOf(dimensions);
    const message = randomVector(dimensions);
    const times: number[] = [];
    // Warm-up rounds let the JIT compile the loop first, as it has in a warm Lambda.
    for (let round = 0; round < warmUpRounds; round += 1)
      rankBehaviors(message, behaviors, { threshold: 0.25, limit: 5 });
    for (let round = 0; round < rounds; round += 1) {
      const started = performance.now();
      rankBehaviors(message, behaviors, { threshold: 0.25, limit: 5 });
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const at = (quantile: number) => times[Math.min(times.length - 1, Math.floor(quantile * times.length))] ?? 0;
    return { dimensions, p50Ms: at(0.5), p99Ms: at(0.99) };
  });
};

export const printMatchingFigures = (figures: MatchingFigure[]): boolean => {
  for (const figure of figures) {
    console.log(
      `  ${triggersPerService} triggers × ${figure.dimensions} dimensions: p50 ${figure.p50Ms.toFixed(2)} ms, p99 ${figure.p99Ms.toFixed(2)} ms`,
    );
  }
  return figures.every((figure) => figure.p99Ms <= targetMs);
};
