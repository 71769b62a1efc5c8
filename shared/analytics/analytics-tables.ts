import { agentLakeSources } from '../agent/index';
import { callLakeSources } from '../call/index';
import { conversationLakeSources } from '../conversation/index';
import type { LakeProjection, LakeSource } from '../kernel/lake-projection';
import { metricLakeSources } from '../metric/index';
import { serviceLakeSources } from '../service/index';
import { toolLakeSources } from '../tool/index';
import { userLakeSources } from '../user/index';
import { lakeTables } from './analytics-schema';

/**
 * Where the lake's rows come from: the table's stream brings each change of a record (its
 * projection's row of the new image, or of the old one for a removal), and a backfill reads an
 * organization's records through the capability that keeps them (its `lake-sources.ts`).
 */
const sources: readonly LakeSource[] = [
  ...conversationLakeSources,
  ...userLakeSources,
  ...serviceLakeSources,
  ...agentLakeSources,
  ...metricLakeSources,
  ...callLakeSources,
  ...toolLakeSources,
];

/** Each lake table's source, in the order of `lakeTables`. */
export const lakeSources: readonly LakeSource[] = lakeTables.map((table) => {
  const source = sources.find((candidate) => candidate.projection === table);
  if (!source) throw new Error(`no capability reads the records of the lake table ${table.name}`);
  return source;
});

/** The table an entity's records make, by the items' `entity` attribute. */
export const lakeTableOfEntity: ReadonlyMap<string, LakeProjection> = new Map(
  lakeTables.map((table) => [table.entity, table] as const),
);
