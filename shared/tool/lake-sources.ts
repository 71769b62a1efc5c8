import { queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { toolInvocationProjection } from './lake-projection';
import { toolInvocations } from './tool-repository';

/** The organization's tool invocations as rows of the lake's table. */
export const toolLakeSources: readonly LakeSource[] = [
  lakeSource(toolInvocationProjection, (orgId) => queryPages(toolInvocations.query(orgId, {}))),
];
