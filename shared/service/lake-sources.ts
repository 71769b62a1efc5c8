import { queryPages } from '../data/table';
import { type LakeSource, lakeSource } from '../kernel/lake-projection';
import { serviceProjection } from './lake-projection';
import { services } from './service-repository';

/** The organization's services as rows of the lake's table. */
export const serviceLakeSources: readonly LakeSource[] = [
  lakeSource(serviceProjection, (orgId) => queryPages(services.query(orgId, {}))),
];
