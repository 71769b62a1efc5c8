import { pageBody } from '../data/paging';
import type { Caller } from '../kernel/caller';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import type { VersionSetRecord, VersionSetRevisionRecord } from './schemas';
import { changeService, requireOnService, requireService, versionSetAttributes, withVersionSet } from './services';
import { getVersionSetRevision, listVersionSetRevisions } from './version-set-revision-repository';
import { EDGE } from './version-sets';

/** `GET …/version_sets/{name}/history`: the set's revisions, newest first, a page at a time (also after its deletion). */
export const getVersionSetHistory = async (
  orgId: string,
  caller: Caller,
  input: { serviceId: string; versionSetName: string; limit: number; continuationToken: number },
) => {
  const service = await requireService(orgId, input.serviceId);
  requireOnService(caller, 'Service:GetVersionSet', service, versionSetAttributes(service, input.versionSetName));
  const page = await listVersionSetRevisions(orgId, {
    serviceId: input.serviceId,
    versionSetName: input.versionSetName,
    limit: input.limit,
    continuationToken: input.continuationToken,
    visible: undefined,
  });
  return pageBody('revisions', page);
};

/**
 * `POST …/version_sets/{name}/rollback`: restores the set as it was after revision `to_revision`,
 * by default as it was before its latest change. The rollback is itself a revision; one that
 * restores a deleted set also needs Service:CreateVersionSet. 400 when
 * there is nothing to restore (no earlier state, or a revision that deleted the set); 404 for a
 * revision that does not exist.
 */
export const rollbackVersionSet = async (
  orgId: string,
  caller: Caller,
  input: { serviceId: string; versionSetName: string; toRevision: number | null },
): Promise<{ revision: VersionSetRevisionRecord | null }> => {
  const { serviceId, versionSetName: name } = input;
  const service = await requireService(orgId, serviceId);
  requireOnService(caller, 'Service:RollbackVersionSet', service, versionSetAttributes(service, name));
  if (name === EDGE)
    throw new BadRequestError('The edge version set cannot be rolled back; it always uses the latest versions.');
  const latest = service.version_set_revisions[name] ?? 0;
  const read = async (revision: number) => {
    const found =
      revision >= 1 && revision <= latest
        ? await getVersionSetRevision(orgId, {
            service_id: serviceId,
            version_set_name: name,
            revision,
          })
        : undefined;
    if (!found) throw new NotFoundError(`Version set '${name}' of service ${serviceId} has no revision ${revision}.`);
    return found;
  };
  let restored: VersionSetRecord | null;
  let target: number | null;
  if (input.toRevision) {
    restored = (await read(input.toRevision)).after;
    target = input.toRevision;
  } else {
    if (latest === 0)
      throw new BadRequestError(`Version set '${name}' of service ${serviceId} has no history to roll back.`);
    restored = (await read(latest)).before;
    target = latest > 1 ? latest - 1 : null;
  }
  if (!restored) {
    throw new BadRequestError(`Version set '${name}' did not exist at that revision; there is nothing to restore.`);
  }
  const set = restored;
  let made: VersionSetRevisionRecord | null = null;
  await changeService(
    orgId,
    serviceId,
    async (current) => {
      // Restoring a deleted set creates it again, which needs the permission to create it.
      if (!Object.hasOwn(current.version_sets, name)) {
        requireOnService(caller, 'Service:CreateVersionSet', current, versionSetAttributes(current, name));
      }
      return withVersionSet(orgId, caller, current, name, set);
    },
    {
      revision: { change: 'rolled-back', rolledBackTo: target },
      companions: (revisions) => {
        made = revisions[0] ?? null;
        return [];
      },
    },
  );
  return { revision: made };
};
