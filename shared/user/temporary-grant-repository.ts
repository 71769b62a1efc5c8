import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { createProcessCache } from '../data/process-cache';
import { type Item, type QueryPage, queryAll, queryPage, transactWrite } from '../data/table';
import type { PermissionGrant } from '../kernel/caller';
import { creatorInfo, tagMap } from '../kernel/schemas';
import { permissionGrantRecord } from '../role/index';

/**
 * Temporary permission grants: one partition per organization in creation order (sort key =
 * id), and an index per user ordered by expiry, so the grants in force for a caller are one
 * Query of the unexpired range on every request. Items expire by TTL a while after the grant
 * (`keptExpiredSeconds`) so `is_expired=true` can still list them; checks never rely on the
 * TTL, which DynamoDB applies late: they compare `expires_at` with now.
 */
export const keptExpiredSeconds = 7 * 24 * 3600;

const temporaryGrantRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  user_id: z.string(),
  permission_grant: permissionGrantRecord,
  justification: z.string(),
  tags: tagMap,
  creator: creatorInfo,
  created_at: z.string(),
  updated_at: z.string(),
  expires_at: z.string(),
  expires_at_epoch: z.number().int(),
});
export type TemporaryGrantRecord = z.infer<typeof temporaryGrantRecord>;

export const temporaryGrants = defineEntity({
  name: 'temporary-permission-grant',
  token: 'TEMPGRANT',
  schema: temporaryGrantRecord,
  sort: (grant: { id: string }) => grant.id,
  indexes: {
    byUser: {
      index: 'gsi1',
      partition: (of: { user_id: string }) => ['USER', of.user_id],
      sort: (grant) => `${grant.expires_at}#${grant.id}`,
    },
  },
});

export const insertTemporaryGrant = async (record: TemporaryGrantRecord): Promise<void> => {
  await transactWrite([temporaryGrants.create(record.org_id, record)], () => new Error(`grant ${record.id} exists`));
  grantCache.forget(record.org_id, record.user_id);
};

/**
 * Every request reads its caller's grants in force: each instance keeps a user's unexpired
 * grants for a few seconds (the principal's own bound, `shared/user/principal.ts`), dropped at
 * once when a grant is created here. A grant created on another instance applies there within
 * `grantCacheMilliseconds`; expiry is checked against the clock on every read.
 */
const grantCacheMilliseconds = 3000;
const grantCache = createProcessCache<{ expires_at: string; permission_grant: PermissionGrant }[]>({
  ttlMs: grantCacheMilliseconds,
  maxEntries: 10_000,
});

/** A user's grants still in force at `nowIso` (a user holds few: the index range is read whole, bounded). */
export const activeGrantsOf = async (orgId: string, userId: string, nowIso: string): Promise<PermissionGrant[]> => {
  const unexpired = await grantCache.get(orgId, userId, async () =>
    (
      await queryAll(
        temporaryGrants.queryIndex(orgId, 'byUser', { user_id: userId }, { between: [nowIso, '\uffff'] }),
        200,
      )
    )
      .map(temporaryGrants.parse)
      .map(({ expires_at, permission_grant }) => ({ expires_at, permission_grant })),
  );
  return (unexpired ?? []).filter((grant) => grant.expires_at > nowIso).map((grant) => grant.permission_grant);
};

/** One page of the organization's grants in creation order. */
export const readTemporaryGrants = (
  orgId: string,
  startKey: Item | undefined,
  options: { limit: number; keep: (grant: TemporaryGrantRecord) => boolean },
): Promise<QueryPage> =>
  queryPage(temporaryGrants.query(orgId, {}), {
    limit: options.limit,
    startKey,
    keep: (item) => options.keep(temporaryGrants.parse(item)),
  });

export const getTemporaryGrants = (orgId: string, ids: readonly string[]): Promise<TemporaryGrantRecord[]> =>
  temporaryGrants.getMany(
    orgId,
    [...new Set(ids)].map((id) => ({ id })),
  );
