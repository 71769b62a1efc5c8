import { logger } from '../aws/observability';
import { allBehaviorSets, getBehaviorVersions, type StoredBehaviorVersion } from '../dynamic-behavior-set/index';
import type { BehaviorAction } from '../dynamic-behavior-set/schemas';
import { decodeVector, type EmbeddingProvider, similarity } from '../llm/embedding';
import { embeddingProvider } from '../llm/registry';
import type { DynamicBehaviorCandidate, DynamicBehaviorSource } from './engine/contracts';

/** A set version ready to be matched: its trigger vectors decoded once. */
export interface MatchableBehavior {
  setId: string;
  version: number;
  triggers: string[];
  actions: BehaviorAction[];
  vectors: Float32Array[];
}

export interface RankOptions {
  /** Candidates need at least this similarity (cosine, -1..1). */
  threshold: number;
  /** At most this many candidates go to the selecting model. */
  limit: number;
  /** The set selected on the previous turn: kept among the candidates whatever its score. */
  previousSetId?: string;
}

/**
 * Ranks behaviours by the best similarity of any of their triggers to the message vector.
 * Pure and allocation-light: 500 triggers of 1024 dimensions are half a million multiply-adds
 * (`npm run bench` prints the time).
 */
export const rankBehaviors = (
  vector: Float32Array,
  behaviors: MatchableBehavior[],
  options: RankOptions,
): DynamicBehaviorCandidate[] => {
  const scored = behaviors.map((behavior) => ({
    behavior,
    relevance: behavior.vectors.reduce((best, trigger) => Math.max(best, similarity(vector, trigger)), -1),
  }));
  const ranked = scored
    .filter((entry) => entry.relevance >= options.threshold)
    .sort((a, b) => b.relevance - a.relevance)
    .slice(0, options.limit);
  const previous = scored.find((entry) => entry.behavior.setId === options.previousSetId);
  if (previous && !ranked.includes(previous)) ranked.push(previous);
  return ranked.map(({ behavior, relevance }) => ({
    versionInfo: [behavior.setId, behavior.version],
    triggers: behavior.triggers,
    actions: behavior.actions,
    relevance,
  }));
};

/** Versions are immutable, so a decoded version serves every later turn of this process. */
const decodedVersions = new Map<string, MatchableBehavior>();
const maxDecodedVersions = 2000;

const matchableOf = (version: StoredBehaviorVersion, embedding: EmbeddingProvider): MatchableBehavior | undefined => {
  if (version.embedding_model !== embedding.model) {
    // Vectors of different models are not comparable; a new version embeds with the current model.
    logger.warn('dynamic behavior set version embedded with another model; create a new version to match it', {
      dynamicBehaviorSetId: version.dynamic_behavior_set_id,
      version: version.version,
      storedModel: version.embedding_model,
      currentModel: embedding.model,
    });
    return undefined;
  }
  return {
    setId: version.dynamic_behavior_set_id,
    version: version.version,
    triggers: version.conversation_triggers,
    actions: version.actions,
    vectors: version.trigger_embeddings.map(decodeVector),
  };
};

/** The latest versions of the organization's active sets applied to the service, decoded. */
const behaviorsOfService = async (
  orgId: string,
  serviceId: string,
  embedding: EmbeddingProvider,
): Promise<MatchableBehavior[]> => {
  const sets = (await allBehaviorSets(orgId, { activeOnly: true })).filter((set) =>
    set.applied_to_services.includes(serviceId),
  );
  const cacheKey = (setId: string, version: number) => `${orgId}#${setId}#${version}`;
  const missing = sets.filter((set) => !decodedVersions.has(cacheKey(set.id, set.latest_version)));
  if (missing.length > 0) {
    const loaded = await getBehaviorVersions(
      orgId,
      missing.map((set) => ({ setId: set.id, version: set.latest_version })),
    );
    if (decodedVersions.size + loaded.length > maxDecodedVersions) decodedVersions.clear();
    for (const version of loaded) {
      const matchable = matchableOf(version, embedding);
      if (matchable) decodedVersions.set(cacheKey(version.dynamic_behavior_set_id, version.version), matchable);
    }
  }
  return sets.flatMap((set) => decodedVersions.get(cacheKey(set.id, set.latest_version)) ?? []);
};

const numberSetting = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) ? value : fallback;
};

/**
 * Candidates need a similarity of DYNAMIC_BEHAVIOR_MIN_SIMILARITY (default 0.25, tuned for the
 * built-in lexical embedding; semantic models usually want 0.3–0.5); at most
 * DYNAMIC_BEHAVIOR_MAX_CANDIDATES (default 5) go to the selecting model.
 */
export const rankOptionsFromEnvironment = (): Omit<RankOptions, 'previousSetId'> => ({
  threshold: numberSetting('DYNAMIC_BEHAVIOR_MIN_SIMILARITY', 0.25),
  limit: Math.max(1, Math.floor(numberSetting('DYNAMIC_BEHAVIOR_MAX_CANDIDATES', 5))),
});

/**
 * The engine's source of dynamic behaviours for a conversation of `serviceId`. The service's sets
 * are read when the source is made, with the turn's other reads, not when the engine first ranks:
 * a round trip less before the first token.
 */
export const behaviorSourceFor = (orgId: string, serviceId: string): DynamicBehaviorSource => {
  const embedding = embeddingProvider();
  const behaviors = behaviorsOfService(orgId, serviceId, embedding);
  // Awaited by `rank`; a turn that ends before ranking leaves the read unawaited.
  behaviors.catch(() => undefined);
  return {
    embed: async (text) => {
      const [vector] = await embedding.embed([text]);
      if (!vector) throw new Error('the embedding provider returned no vector');
      return vector;
    },
    rank: async (vector, previous) =>
      rankBehaviors(vector, await behaviors, {
        ...rankOptionsFromEnvironment(),
        previousSetId: previous?.[0],
      }),
  };
};
