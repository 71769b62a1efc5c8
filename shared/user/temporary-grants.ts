import { keysPage, type Paged, pageOfQuery, sortedPage } from '../data/paging';
import type { Item } from '../data/table';
import type { Caller, PermissionGrant } from '../kernel/caller';
import { creatorOf } from '../kernel/caller';
import { durationSeconds } from '../kernel/durations';
import { ForbiddenError, NotFoundError, ValidationError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import {
  type CreatorFilter,
  compareBySortEntries,
  fieldValue,
  matchesTags,
  type SortEntry,
  type TagFilter,
} from '../kernel/list-params';
import { permissionCheck, requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';
import { callerAtLeast, callerOutranks } from '../role/privilege';
import { loadPrincipal } from './principal';
import {
  insertTemporaryGrant,
  keptExpiredSeconds,
  readTemporaryGrants,
  type TemporaryGrantRecord,
  temporaryGrants,
} from './temporary-grant-repository';

/**
 * Temporary permission grants give one user one more grant until it expires. They are read
 * with the user's role on every request (`shared/http/authenticate.ts`), after the role's
 * grants, so a temporary Deny narrows and a temporary Allow widens like a role grant would.
 */
const maxGrantSeconds = 90 * 24 * 3600;

const grantSeconds = (duration: string): number => {
  const seconds = durationSeconds(duration);
  if (seconds === undefined || seconds < 1 || seconds > maxGrantSeconds) {
    throw new ValidationError([
      {
        loc: ['body', 'duration'],
        msg: 'Expected an ISO 8601 duration from 1 second to 90 days, e.g. PT1H.',
        type: 'value_error',
      },
    ]);
  }
  return seconds;
};

/** The caller's own grants, without the temporary ones: a temporary grant is never passed on. */
const standingGrants = (caller: Caller): PermissionGrant[] =>
  caller.grants.filter((grant) => !caller.temporaryGrants?.includes(grant));

export interface TemporaryGrantInput {
  user_id: string;
  duration: string;
  permission_grant: { action: string; permission_name: string; conditions: PermissionGrant['conditions'] };
  tags: Record<string, string | null>;
  justification: string;
}

/**
 * Needs Role:CreateTemporaryPermissionGrant on the grant, a caller who outranks the user's
 * role (as assigning a role does) and who holds the granted permission at least as broadly
 * themselves through their role: a grant never widens anyone beyond the granter.
 */
export const createTemporaryGrant = async (
  orgId: string,
  caller: Caller,
  input: TemporaryGrantInput,
): Promise<{ temporary_permission_grant_id: string; expires_at: string }> => {
  await requireOrganization(orgId);
  const lifetime = grantSeconds(input.duration);
  const grant: PermissionGrant = { ...input.permission_grant };
  requirePermission(caller, 'Role:CreateTemporaryPermissionGrant', {
    user_id: input.user_id,
    permission_name: grant.permission_name,
  });
  const grantee = await loadPrincipal(orgId, input.user_id);
  if (!grantee) throw new NotFoundError(`User ${input.user_id} does not exist.`);
  if (!callerOutranks(caller, grantee.grants)) {
    throw new ForbiddenError("Only a user more privileged than the user's role may grant them permissions.");
  }
  if (!callerAtLeast({ ...caller, grants: standingGrants(caller) }, [grant])) {
    throw new ForbiddenError('A temporary grant cannot give more than the granter holds through their role.');
  }
  const now = Date.now();
  const expiresAt = new Date(now + lifetime * 1000).toISOString();
  const record: TemporaryGrantRecord = {
    id: newId(),
    org_id: orgId,
    user_id: input.user_id,
    permission_grant: grant,
    justification: input.justification,
    tags: input.tags,
    creator: creatorOf(caller),
    created_at: new Date(now).toISOString(),
    updated_at: new Date(now).toISOString(),
    expires_at: expiresAt,
    expires_at_epoch: Math.ceil(now / 1000 + lifetime + keptExpiredSeconds),
  };
  await insertTemporaryGrant(record);
  return { temporary_permission_grant_id: record.id, expires_at: expiresAt };
};

export interface TemporaryGrantListQuery {
  ids?: string[];
  userIds?: string[];
  permissionName?: string;
  isExpired?: boolean;
  creators: CreatorFilter[];
  tags: TagFilter[];
  sortBy: SortEntry[];
  limit: number;
  continuationToken: number;
  visible: (grant: TemporaryGrantRecord) => boolean;
}

const grantAttributes = (grant: TemporaryGrantRecord) => ({
  user_id: grant.user_id,
  permission_name: grant.permission_grant.permission_name,
  temporary_permission_grant_id: grant.id,
});

export const listTemporaryGrants = async (
  orgId: string,
  caller: Caller,
  query: Omit<TemporaryGrantListQuery, 'visible'>,
): Promise<Paged<TemporaryGrantRecord>> => {
  await requireOrganization(orgId);
  const now = new Date().toISOString();
  const permitted = permissionCheck(caller, 'Role:GetTemporaryPermissionGrant');
  const full: TemporaryGrantListQuery = {
    ...query,
    visible: (grant) => permitted(grantAttributes(grant)),
  };
  const matches = (grant: TemporaryGrantRecord) =>
    (!query.userIds?.length || query.userIds.includes(grant.user_id)) &&
    (query.permissionName === undefined || grant.permission_grant.permission_name === query.permissionName) &&
    (query.isExpired === undefined || grant.expires_at <= now === query.isExpired) &&
    (query.creators.length === 0 ||
      query.creators.some(
        (creator) => creator.orgId === grant.creator.org_id && creator.userId === grant.creator.user_id,
      )) &&
    matchesTags(grant.tags, query.tags) &&
    full.visible(grant);
  const keep = (item: Item) => matches(temporaryGrants.parse(item));
  const compare = (a: Item, b: Item) =>
    compareBySortEntries(query.sortBy, fieldValue, (grant: Item) => String(grant.id))(a, b);
  return pageOfQuery(
    orgId,
    'temporary-permission-grants',
    full,
    (startKey) => {
      if (query.ids?.length) {
        const keys = query.ids.map((id) => temporaryGrants.key(orgId, { id }));
        return keysPage(keys, startKey, { limit: query.limit, keep, compare });
      }
      if (query.sortBy.length > 0) {
        return sortedPage(temporaryGrants.query(orgId, {}), startKey, { limit: query.limit, keep, compare });
      }
      return readTemporaryGrants(orgId, startKey, { limit: query.limit, keep: matches });
    },
    temporaryGrants.parse,
  );
};

export const temporaryGrantView = (grant: TemporaryGrantRecord) => ({
  _id: grant.id,
  org_id: grant.org_id,
  created_at: grant.created_at,
  updated_at: grant.updated_at,
  user_id: grant.user_id,
  expires_at: grant.expires_at,
  permission_grant: grant.permission_grant,
  justification: grant.justification,
  creator: grant.creator,
  tags: grant.tags,
});
