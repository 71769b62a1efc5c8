import { queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { memoryProjection, userProjection } from './lake-projection';
import { memories } from './memory-repository';
import { users } from './user-repository';

/** The organization's users and memories as rows of the lake's tables. */
export const userLakeSources: readonly LakeSource[] = [
  lakeSource(userProjection, (orgId) => queryPages(users.query(orgId, {}))),
  lakeSource(memoryProjection, (orgId) => queryPages(memories.queryIndex(orgId, 'all', {}))),
];
