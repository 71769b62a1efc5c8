import { organizationIdPattern } from '../organization/organization-ids';

/**
 * Where the analytics lake keeps each organization's records (Hive-partitioned Parquet, read as
 * is by DuckDB, Athena and Spark), and how versions of a record are ordered.
 *
 *   {table}/org_id={org}/part-{generation}.parquet   the compacted records: one file, the latest
 *                                                    version of each live record
 *   {table}/org_id={org}/_delta-{token}.parquet      changes since (the stream's, a backfill's
 *                                                    snapshot); names starting with `_` are
 *                                                    hidden from Athena and Spark (Hive convention)
 *   _dirty/{org}                                     the organization has deltas to compact
 *   _athena-results/                                 Athena's query results (the workgroup's)
 */
export const baseFilePrefix = 'part-';
export const deltaFilePrefix = '_delta-';
export const dirtyMarkerRoot = '_dirty/';
export const athenaResultsRoot = '_athena-results/';

/** Refuses an organization id that could leave its folder (ids are DNS labels: see organization-ids.ts). */
export const lakeOrganization = (orgId: string): string => {
  if (!organizationIdPattern.test(orgId)) throw new Error(`not an organization id: ${JSON.stringify(orgId)}`);
  return orgId;
};

/** The organization's folder of a table; the trailing `/` keeps `org_id=ab/` out of `org_id=a`'s. */
export const tableFolder = (table: string, orgId: string): string => `${table}/org_id=${lakeOrganization(orgId)}/`;

export const dirtyMarkerKey = (orgId: string): string => `${dirtyMarkerRoot}${lakeOrganization(orgId)}`;

export type LakeFileKind = 'base' | 'delta';

/** What a file of a table folder is, from its name; undefined for anything else. */
export const lakeFileKind = (name: string): LakeFileKind | undefined => {
  if (!name.endsWith('.parquet')) return undefined;
  if (name.startsWith(baseFilePrefix)) return 'base';
  if (name.startsWith(deltaFilePrefix)) return 'delta';
  return undefined;
};

/**
 * A version orders the changes of one record: the stream record's time (DynamoDB rounds it down to
 * the second, DynamoDB Local to the minute), then its sequence number, both zero-padded so that
 * text order is time order. The stream delivers one record's changes in order, so a later change
 * always has the greater version.
 */
export const streamVersion = (approximateCreationSeconds: number, sequenceNumber: string): string =>
  `${String(approximateCreationSeconds * 1000).padStart(15, '0')}-${sequenceNumber.padStart(40, '0')}`;

/**
 * A backfill reads the table as of `startedAt`: its snapshot's version is earlier by more than the
 * stream's rounding, so any change made after the read began has a greater version and wins, and
 * every change before it is superseded by the snapshot (which already holds its outcome).
 */
export const snapshotMarginMs = 120_000;
export const snapshotVersion = (startedAtMs: number): string =>
  `${String(startedAtMs - snapshotMarginMs).padStart(15, '0')}-`;

/** Whether a version is a snapshot's (no sequence number). */
export const isSnapshotVersion = (version: string): boolean => version.endsWith('-');

/**
 * What a session reading one organization's lake may do (an IAM policy document): get the objects
 * of its folders, `{table}/org_id={org}/…`, and list under them. The query function assumes its
 * reader role with this session policy, and the role itself allows only the folders its session
 * is tagged with (`infra/constructs/analytics-lake.ts`): either alone keeps other folders out.
 */
export const organizationReadPolicy = (partition: string, bucket: string, orgId: string) => {
  const folders = `*/org_id=${lakeOrganization(orgId)}/*`;
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: 's3:GetObject', Resource: `arn:${partition}:s3:::${bucket}/${folders}` },
      {
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: `arn:${partition}:s3:::${bucket}`,
        Condition: { StringLike: { 's3:prefix': folders } },
      },
    ],
  };
};
