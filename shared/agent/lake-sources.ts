import { queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { agents } from './agent-repository';
import { agentProjection } from './lake-projection';

/** The organization's agents (their heads) as rows of the lake's table. */
export const agentLakeSources: readonly LakeSource[] = [
  lakeSource(agentProjection, (orgId) => queryPages(agents.heads.query(orgId, {}))),
];
