import { frontendDns } from '../aws/frontend-dns';
import { forgetOrganizationCaches } from '../data/process-cache';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { getOrganization, markOrganizationDeleted } from '../organization/index';
import { eraseOrganizationTools } from '../tool/erasure';
import { forgetPrincipals } from '../user/principal';
import { eraseOrganizationData } from './entity-catalog';

/**
 * Deleting an organization reaches every capability's records, so it sits above them: marks the
 * organization deleted (from then on it is treated as absent), removes its tool functions and its
 * web app's DNS record, then erases every entity of the catalog and every object it owns, the
 * organization record last. Each step is idempotent, so a failed delete is completed by repeating it.
 */
export const deleteOrganization = async (orgId: string, caller: Caller): Promise<void> => {
  requirePermission(caller, 'Organization:DeleteOrganization');
  if (orgId === config.rootOrganizationId) {
    throw new BadRequestError('The root organization of the platform cannot be deleted.');
  }
  const organization = await getOrganization(orgId, { includeDeleted: true, consistent: true });
  if (!organization) throw new NotFoundError(`Organization ${orgId} does not exist.`);
  await markOrganizationDeleted(orgId, nowIso());
  forgetPrincipals(orgId);
  await eraseOrganizationTools(orgId);
  await (await frontendDns()).removeOrganization(orgId);
  await eraseOrganizationData(orgId);
  forgetOrganizationCaches(orgId);
};
