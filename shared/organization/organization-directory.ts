import { z } from 'zod';
import { defineEntity, type Entity } from '../data/entity';
import { deleteItem, type Item, queryPage, type TransactItem } from '../data/table';
import { config } from '../kernel/config';

/**
 * Every organization, named by one entry in the root organization's partition: how an operator's
 * job that visits them all (the analytics lake's backfill) lists them a page at a time with a
 * Query, as the table is never scanned. An entry holds nothing but the organization's id; it is
 * written with the organization and erased with it. An organization made before the directory
 * is entered the first time one of its users is authenticated (`listInDirectory`, called where
 * the default roles are upgraded, in `organization-repository.ts`), and its record then says so
 * (`listed_in_directory`).
 */
const directory = defineEntity({
  name: 'organization-directory-entry',
  token: 'ORGDIRECTORY',
  schema: z.object({ listed_org_id: z.string() }),
  sort: (entry: { listed_org_id: string }) => entry.listed_org_id,
});

/** The directory as the entity catalog erases it: an organization's entry lives in the root organization's partition. */
export const organizationDirectory: Entity = {
  name: directory.name,
  erase: (orgId) => deleteItem(directory.key(config.rootOrganizationId, { listed_org_id: orgId })),
};

/** The transaction item entering a new organization in the directory (its record says `listed_in_directory`). */
export const directoryEntryItem = (orgId: string): TransactItem => ({
  Put: { Item: directory.item(config.rootOrganizationId, { listed_org_id: orgId }) },
});

/**
 * Organization ids, a page of the directory at a time, in id order from `startKey` (the page's
 * `nextKey`, or `directoryKeyAfter` of the last id handled).
 */
export const listedOrganizationIds = async (
  startKey?: Item,
  limit = 100,
): Promise<{ orgIds: string[]; nextKey?: Item }> => {
  const page = await queryPage(directory.query(config.rootOrganizationId, {}), { limit, startKey });
  return { orgIds: page.items.map((item) => directory.parse(item).listed_org_id), nextKey: page.nextKey };
};

/** Where a listing resumes right after the organization's entry. */
export const directoryKeyAfter = (orgId: string): Item => ({
  ...directory.key(config.rootOrganizationId, { listed_org_id: orgId }),
});
