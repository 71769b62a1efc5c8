import { queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { calls } from './call-repository';
import { callProjection } from './lake-projection';

/** The organization's calls as rows of the lake's `calls` table (the backfill's reading). */
export const callLakeSources: readonly LakeSource[] = [
  lakeSource(callProjection, (orgId) => queryPages(calls.queryIndex(orgId, 'all', {}))),
];
