import { z } from 'zod';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { type CreatorFilter, matchesTags, type SortEntry, type TagFilter } from '../kernel/list-params';
import {
  asIfMissing,
  hasPermission,
  type PermissionName,
  type ResourceAttributes,
  requirePermission,
} from '../kernel/permissions';
import { creatorInfo, tagMap } from '../kernel/schemas';
import { keysPage, type Paged, pageOfQuery, sortedPage } from './paging';
import { bestMatches, byUpdatedAt, matchesCreators, maxCatalogRecords } from './record-catalog';
import { type Item, isConditionFailure, queryAll, queryPage, updateItem } from './table';
import type { StoredVersion, VersionedEntity, VersionListQuery } from './versioned-entity';
import { versionedHead } from './versioned-head';

/*
 * A versioned catalog (the simulation's personas and scenarios): named, tagged, softly deleted
 * heads with numbered, immutable versions (the versioned-entity layout, `deprecated` being
 * `is_deleted`). The head repeats what search reads of its latest version (`search_text`) and
 * carries a usage stamp that users of a record move when they start using it (`guardUnused`).
 */

export const catalogHead = versionedHead.extend({
  org_id: z.string(),
  tags: tagMap,
  updated_at: z.string(),
  updated_by: creatorInfo,
  search_text: z.string(),
  usage_stamp: z.number().int().optional(),
});
export type CatalogHead = z.infer<typeof catalogHead>;

export interface CatalogFilters<F> {
  ids?: string[];
  isDeleted?: boolean;
  creators: CreatorFilter[];
  tags: TagFilter[];
  /** The kind's own filters (a persona's roles). */
  own: F;
}

export interface VersionedCatalogDefinition<V extends StoredVersion, H extends CatalogHead, F, B, VV> {
  records: VersionedEntity<V>;
  /** A version built from the request's body, and the text search reads of it. */
  buildVersion: (
    orgId: string,
    id: string,
    version: number,
    body: B,
    caller: Caller,
  ) => Promise<{ record: V; searchText: string }>;
  /** A version as the API shows it. */
  versionView: (version: Omit<V, 'id'> & { id?: string }) => VV;
  head: z.ZodType<H>;
  /** How messages name a record, e.g. `Simulation persona`. */
  label: string;
  permissions: { get: PermissionName; create: PermissionName; modify: PermissionName; delete: PermissionName };
  /** What permission grant conditions can name on a record. */
  attributes: (head: H) => ResourceAttributes;
  /**
   * Before a soft delete: refuses a record still in use (400), and answers the write's condition
   * that keeps it unused until the delete is written (the simulation's usage stamp).
   */
  guardUnused: (orgId: string, id: string, head: H) => Promise<{ condition: string; values: Record<string, unknown> }>;
  matchesOwn: (head: H, filters: F) => boolean;
  /**
   * Checks, once the caller may see a record, that they may also read its content (its versions):
   * a record copied from elsewhere carries its source's protection (the simulation's
   * `derived_from`). Throws to refuse.
   */
  readsContent?: (orgId: string, caller: Caller, head: H) => Promise<void>;
}

export const defineVersionedCatalog = <V extends StoredVersion, H extends CatalogHead, F, B, VV>(
  definition: VersionedCatalogDefinition<V, H, F, B, VV>,
) => {
  const { records, label, permissions } = definition;
  const toHead = (raw: object): H => definition.head.parse(raw);
  const notFound = (id: string) => records.notFound(id);

  const visibleTo = (caller: Caller) => (head: H) =>
    hasPermission(caller, permissions.get, definition.attributes(head));

  /** The head, after checking `permission` on it; a caller who may not see it is answered as for a missing one. */
  const authorized = async (
    orgId: string,
    id: string,
    caller: Caller,
    permission: PermissionName,
    consistent = false,
  ): Promise<H> => {
    const head = toHead(await records.getExisting(orgId, id, consistent));
    asIfMissing(
      () => requirePermission(caller, permission, definition.attributes(head)),
      () => notFound(id),
      () => visibleTo(caller)(head),
    );
    return head;
  };

  const matches = (head: H, filters: CatalogFilters<F>): boolean =>
    (filters.isDeleted === undefined || head.deprecated === filters.isDeleted) &&
    matchesCreators(head.creator, filters.creators) &&
    matchesTags(head.tags, filters.tags) &&
    definition.matchesOwn(head, filters.own);

  /** Every record of the organization, at most {@link maxCatalogRecords}. */
  const all = async (orgId: string): Promise<H[]> =>
    (await queryAll(records.heads.query(orgId, {}), maxCatalogRecords)).map((item) =>
      toHead(records.heads.parse(item)),
    );

  return {
    notFound,
    authorized,

    /** Creates a record with its first version; 409 when the name is taken. */
    create: async (
      orgId: string,
      caller: Caller,
      request: { name: string; tags: Record<string, string | null>; attributes?: Item },
      firstVersion: (id: string) => Promise<{ record: V; searchText: string }>,
    ): Promise<string> => {
      const id = newId();
      // Grant conditions name the head's own attributes only, which the request gives before it exists.
      const head = { id, name: request.name, tags: request.tags, ...request.attributes } as unknown as H;
      requirePermission(caller, permissions.create, definition.attributes(head));
      requirePermission(caller, permissions.modify, definition.attributes(head));
      const { record, searchText } = await firstVersion(id);
      const creator = creatorOf(caller);
      await records.create(orgId, request.name, creator, {
        id,
        attributes: {
          ...request.attributes,
          org_id: orgId,
          tags: request.tags,
          updated_at: nowIso(),
          updated_by: creator,
        },
        firstVersion: { record, headAttributes: { search_text: searchText } },
      });
      return id;
    },

    /** Adds the next version; 400 when `expectedVersion` is not its number. */
    createVersion: async (
      orgId: string,
      caller: Caller,
      id: string,
      body: B,
      options: { expectedVersion?: number } = {},
    ): Promise<{ version: number }> => {
      const searchTexts = new Map<number, string>();
      const created = await records.appendVersion(orgId, id, {
        expectedVersion: options.expectedVersion,
        versionMismatch: (message) => new BadRequestError(message),
        authorize: (raw) => {
          const head = toHead(raw);
          asIfMissing(
            () => requirePermission(caller, permissions.modify, definition.attributes(head)),
            () => notFound(id),
            () => visibleTo(caller)(head),
          );
        },
        build: async (_latest, next) => {
          const { record, searchText } = await definition.buildVersion(orgId, id, next, body, caller);
          searchTexts.set(next, searchText);
          return record;
        },
        headAttributes: (record) => ({
          search_text: searchTexts.get(record.version) ?? '',
          updated_at: nowIso(),
          updated_by: creatorOf(caller),
        }),
      });
      return { version: created.version };
    },

    listVersions: async (orgId: string, caller: Caller, id: string, query: VersionListQuery): Promise<Paged<VV>> => {
      let seen: H | undefined;
      const page = await records.listVersions(orgId, id, query, (raw) => {
        const head = toHead(raw);
        asIfMissing(
          () => requirePermission(caller, permissions.get, definition.attributes(head)),
          () => notFound(id),
        );
        seen = head;
      });
      if (seen && definition.readsContent) await definition.readsContent(orgId, caller, seen);
      return { ...page, items: page.items.map(definition.versionView) };
    },

    /** The latest version of a record that exists, or undefined. */
    latestVersion: async (orgId: string, id: string): Promise<V | undefined> => {
      const head = await records.get(orgId, id);
      return head?.latest_version ? records.getVersion(orgId, id, head.latest_version) : undefined;
    },

    list: async (
      orgId: string,
      caller: Caller,
      query: CatalogFilters<F> & { sortBy: SortEntry[]; limit: number; continuationToken: number },
    ): Promise<Paged<H>> => {
      const visible = visibleTo(caller);
      const keep = (item: Item) => {
        const head = toHead(records.heads.parse(item));
        return matches(head, query) && visible(head);
      };
      const compare = byUpdatedAt(query.sortBy);
      return pageOfQuery(
        orgId,
        records.heads.name,
        { ...query, visible },
        (startKey) => {
          if (query.ids && query.ids.length > 0) {
            return keysPage(
              query.ids.map((id) => records.heads.key(orgId, { id })),
              startKey,
              { limit: query.limit, keep, compare },
            );
          }
          const spec = records.heads.query(orgId, {});
          return compare
            ? sortedPage(spec, startKey, { limit: query.limit, keep, compare })
            : queryPage(spec, { limit: query.limit, startKey, keep });
        },
        (item) => toHead(records.heads.parse(item)),
      );
    },

    /** The records the caller may see, for `filter_values` (first pages only). */
    visibleRecords: async (orgId: string, caller: Caller): Promise<H[]> => (await all(orgId)).filter(visibleTo(caller)),

    /** The best matches of the text over the names and the latest versions' searchable text (`bestMatches`). */
    search: async (orgId: string, caller: Caller, text: string, filters: CatalogFilters<F>): Promise<H[]> => {
      const visible = visibleTo(caller);
      const candidates = (await all(orgId)).filter((head) => matches(head, filters) && visible(head));
      return bestMatches(candidates, text, (head) => head.search_text);
    },

    updateTags: async (
      orgId: string,
      caller: Caller,
      id: string,
      tags: Record<string, string | null> | null | undefined,
    ): Promise<void> => {
      await authorized(orgId, id, caller, permissions.modify);
      try {
        await updateItem({
          Key: records.heads.key(orgId, { id }),
          UpdateExpression: `SET ${tags ? 'tags = :tags, ' : ''}updated_at = :now, updated_by = :by`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ...(tags ? { ':tags': tags } : {}), ':now': nowIso(), ':by': creatorOf(caller) },
        });
      } catch (error) {
        if (isConditionFailure(error)) throw notFound(id);
        throw error;
      }
    },

    /** Deletes softly; 404 when missing or already deleted, 400 while a unit test uses it. */
    softDelete: async (orgId: string, caller: Caller, id: string): Promise<void> => {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const head = await authorized(orgId, id, caller, permissions.delete, true);
        if (head.deprecated) throw notFound(id);
        const unchanged = await definition.guardUnused(orgId, id, head);
        try {
          await updateItem({
            Key: records.heads.key(orgId, { id }),
            UpdateExpression: 'SET deprecated = :true, updated_at = :now, updated_by = :by',
            ConditionExpression: `deprecated = :false AND ${unchanged.condition}`,
            ExpressionAttributeValues: {
              ':true': true,
              ':false': false,
              ':now': nowIso(),
              ':by': creatorOf(caller),
              ...unchanged.values,
            },
          });
          return;
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
        }
      }
      throw new ConflictError(`${label} ${id} is being changed at the same time; retry.`);
    },
  };
};
