import { defineEntity } from '../data/entity';
import { type Paged, pageOfQuery } from '../data/paging';
import { queryPage, type TransactItem } from '../data/table';
import { type VersionSetRevisionRecord, versionSetRevisionRecord } from './schemas';

/*
 * The history of version sets, one partition per organization:
 *   version set revision   VERSION_SET_REVISION   {service}#{version set}#{revision, 8 digits}
 * A revision is written in the same transaction as the change it records (conditioned on the
 * service's revision), so the history holds exactly the changes that were stored. Revisions are
 * never changed or removed but with the organization.
 */
const revisionKey = (revision: number) => String(revision).padStart(8, '0');

export const versionSetRevisions = defineEntity({
  name: 'version-set-revision',
  token: 'VERSION_SET_REVISION',
  schema: versionSetRevisionRecord,
  sort: (of: { service_id: string; version_set_name: string; revision: number }) =>
    `${of.service_id}#${of.version_set_name}#${revisionKey(of.revision)}`,
});

/** The transaction item recording a revision; fails when the number is taken. */
export const versionSetRevisionPut = (orgId: string, revision: VersionSetRevisionRecord): TransactItem =>
  versionSetRevisions.create(orgId, revision);

export const getVersionSetRevision = (
  orgId: string,
  of: { service_id: string; version_set_name: string; revision: number },
): Promise<VersionSetRevisionRecord | undefined> => versionSetRevisions.get(orgId, of, true);

export interface VersionSetHistoryQuery {
  serviceId: string;
  versionSetName: string;
  limit: number;
  continuationToken: number;
  visible: unknown;
}

/** One page of a version set's revisions, newest first: one Query of its key range, `limit` at a time. */
export const listVersionSetRevisions = (
  orgId: string,
  query: VersionSetHistoryQuery,
): Promise<Paged<VersionSetRevisionRecord>> =>
  pageOfQuery(
    orgId,
    'version-set-revisions',
    query,
    (startKey) =>
      queryPage(
        versionSetRevisions.query(orgId, {}, { prefix: `${query.serviceId}#${query.versionSetName}#`, forward: false }),
        { limit: query.limit, startKey },
      ),
    (item) => versionSetRevisions.parse(item),
  );
