import { rm } from 'node:fs/promises';
import { deleteObjects } from '../aws/bucket';
import { deleteLakeObject } from '../aws/lake-store';
import { config } from '../kernel/config';
import { getOrganization } from '../organization/index';
import { lakeTables } from './analytics-schema';
import { dirtyMarkerKey, tableFolder } from './lake-layout';
import { localOrganizationFolder } from './lake-sync';

/**
 * Erases the organization's analytics lake: its folder of every table and its compaction marker,
 * and the local copies this process keeps of them (the SQL query's, when it runs here). Idempotent.
 */
export const eraseOrganizationLake = async (orgId: string): Promise<void> => {
  for (const table of lakeTables) await deleteObjects(tableFolder(table.name, orgId), config.lakeBucket);
  await deleteLakeObject(dirtyMarkerKey(orgId));
  await rm(localOrganizationFolder(orgId), { recursive: true, force: true });
};

/** Whether the organization exists and is not being deleted: only then does its lake take changes. */
export const isOrganizationLive = async (orgId: string): Promise<boolean> => {
  const organization = await getOrganization(orgId, { includeDeleted: true });
  return organization !== undefined && !organization.deleted_at;
};
