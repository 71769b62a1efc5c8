import type { z } from 'zod';
import { BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { sortableValue, type VersionFilter } from '../kernel/list-params';
import { defineEntity } from './entity';
import { uniqueName } from './key-parts';
import { keysPage, listFingerprint, type Paged, pageOf, pageOfQuery } from './paging';
import { createProcessCache } from './process-cache';
import {
  failedConditions,
  type Item,
  isConditionFailure,
  queryPage,
  type TransactItem,
  transactWrite,
  updateItem,
} from './table';
import { type VersionedHead, versionedHead } from './versioned-head';

/**
 * Agents and service hierarchical state machines are the same kind of record: a named,
 * deprecatable head with numbered, immutable versions that services pin. One declaration
 * per entity gives its keys and operations (see `agent-repository.ts`, `state-machine-repository.ts`).
 *
 * Entities, for token T (partition, then sort key):
 *   head        T            {id}                          (creation order: ids sort by time)
 *   name guard  T_NAME       {name}                        (names are unique in an organization)
 *   version     T_VERSION    {id}#{version, zero-padded}
 */

/**
 * What the list operations show of a head, which is also all a list's filters and the permission
 * conditions on a head name. Read straight off the stored item (the table's own attributes are
 * not among these), so a page of heads is not parsed and copied whole.
 */
const listedHead = versionedHead.pick({ id: true, name: true, deprecated: true, latest_version: true });
export type HeadView = z.output<typeof listedHead>;

export interface StoredVersion {
  /** Internal id of the version record. */
  id: string;
  version: number;
}

export interface VersionedEntityDefinition<V extends StoredVersion> {
  /** Value of the `entity` attribute and the eraser's name, e.g. `agent`. */
  entity: string;
  /** Uppercase key token, e.g. `AGENT`. */
  token: string;
  /** How messages name the entity, e.g. `agent`, `state machine`. */
  label: string;
  /** Parses a stored version item. */
  version: z.ZodType<V>;
}

export interface HeadListQuery {
  ids?: string[];
  deprecated?: boolean;
  /** Records the caller may not see are left out (permission filtering). */
  visible: (head: HeadView) => boolean;
  limit: number;
  continuationToken: number;
}

export interface VersionListQuery {
  versions?: VersionFilter;
  descending: boolean;
  limit: number;
  continuationToken: number;
}

export interface AppendVersionOptions<V> {
  /** Checks the caller's permission on the head; throws ForbiddenError. */
  authorize?: (head: VersionedHead) => void;
  /** The `version` query parameter: the call fails unless the new version gets this number. */
  expectedVersion?: number;
  /** The failure when `expectedVersion` is not the next number: 409 unless the reference says otherwise. */
  versionMismatch?: (message: string) => Error;
  /** Builds the record of version `next` from the latest one (undefined for the first). */
  build: (latest: V | undefined, next: number) => V | Promise<V>;
  /** Head attributes that follow the latest version, set in the same write (e.g. what a search reads). */
  headAttributes?: (record: V) => Item;
}

export interface CreateHeadOptions<V> {
  /** The head's id, when the caller needs it beforehand (a first version refers to it). */
  id?: string;
  /** Further attributes of the head, beyond those every versioned record has. */
  attributes?: Item;
  /** Version 1, written with the head; `headAttributes` as in {@link AppendVersionOptions}. */
  firstVersion?: { record: V; headAttributes?: Item };
  /** A further item of the same transaction (e.g. a counter's limit) and the error when its condition fails. */
  guard?: { item: TransactItem; failure: () => Error };
}

/** DynamoDB stores at most 400 KB per item; what is left is for keys and attribute names. */
const maxRecordBytes = 380_000;

/** Rejects a record too large to store with 413 instead of letting DynamoDB fail with a 500. */
export const ensureRecordFits = (record: unknown, what: string): void => {
  if (Buffer.byteLength(JSON.stringify(record)) > maxRecordBytes) {
    throw new PayloadTooLargeError(`The ${what} is too large to store (at most about ${maxRecordBytes / 1000} KB).`);
  }
};

/** A concurrent writer took the number; reading again and rebuilding is enough to resolve it. */
const appendAttempts = 5;

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

export const defineVersionedEntity = <V extends StoredVersion>(definition: VersionedEntityDefinition<V>) => {
  const { entity, token, label } = definition;
  const heads = defineEntity({
    name: entity,
    token,
    // Loose: a head may carry attributes of its own kind (a metric's services, tags, latest description).
    schema: versionedHead.loose(),
    sort: (head: { id: string }) => head.id,
    guards: {
      name: uniqueName(`${token}_NAME`, (head) => ({ id: head.id })),
    },
  });
  const versions = defineEntity({
    name: `${entity}-version`,
    token: `${token}_VERSION`,
    schema: definition.version,
    // `id` is the version record's own; the key names the head (stored as `head_id`).
    sort: (version: { head_id: string; version: number }) => `${version.head_id}#${sortableValue(version.version)}`,
  });
  const headKey = (orgId: string, id: string) => heads.key(orgId, { id });
  const toVersion = (item: Item): V => versions.parse(item);
  const notFound = (id: string) => new NotFoundError(`${capitalized(label)} ${id} does not exist.`);

  const get = (orgId: string, id: string, consistent = false): Promise<VersionedHead | undefined> =>
    heads.get(orgId, { id }, consistent);

  const getExisting = async (orgId: string, id: string, consistent = false): Promise<VersionedHead> => {
    const head = await get(orgId, id, consistent);
    if (!head) throw notFound(id);
    return head;
  };

  /** The heads of `ids` that exist, by id. */
  const getMany = async (orgId: string, ids: string[]): Promise<Map<string, VersionedHead>> => {
    const found = await heads.getMany(
      orgId,
      [...new Set(ids)].map((id) => ({ id })),
    );
    return new Map(found.map((head) => [head.id, head]));
  };

  // Versions never change once written: each instance keeps those it read (services pin them,
  // so every conversation turn reads the same few).
  const versionCache = createProcessCache<V>({ maxEntries: 2000 });
  const getVersion = (orgId: string, id: string, version: number): Promise<V | undefined> =>
    versionCache.get(orgId, `${id}#${version}`, () => versions.get(orgId, { head_id: id, version }));

  /** Stores `record` as the next version, conditioned on the latest version it was built from; false when it lost the race. */
  const putVersion = async (
    orgId: string,
    id: string,
    record: V,
    basedOn: number | null,
    headAttributes: Item = {},
  ): Promise<boolean> => {
    ensureRecordFits(record, `${label} version`);
    const lostRace = new ConflictError('lost the race for this version number');
    const followers = Object.entries(headAttributes);
    try {
      await transactWrite(
        [
          {
            Update: {
              Key: headKey(orgId, id),
              UpdateExpression: [
                'SET latest_version = :version',
                ...followers.map((_, index) => `#follow${index} = :follow${index}`),
              ].join(', '),
              ConditionExpression:
                basedOn === null
                  ? 'attribute_exists(pk) AND attribute_not_exists(latest_version)'
                  : 'latest_version = :basedOn',
              ...(followers.length > 0
                ? {
                    ExpressionAttributeNames: Object.fromEntries(
                      followers.map(([name], index) => [`#follow${index}`, name]),
                    ),
                  }
                : {}),
              ExpressionAttributeValues: {
                ':version': record.version,
                ...(basedOn === null ? {} : { ':basedOn': basedOn }),
                ...Object.fromEntries(followers.map(([, value], index) => [`:follow${index}`, value])),
              },
            },
          },
          versions.create(orgId, { ...record, head_id: id }),
        ],
        () => lostRace,
      );
      return true;
    } catch (error) {
      if (error === lostRace) return false;
      throw error;
    }
  };

  return {
    /** The declarations, for the entity catalog. */
    entities: [heads, versions],
    /** The answer for a head that does not exist (or that the caller may not see). */
    notFound,
    /** The heads' declaration: for kinds whose heads carry attributes of their own, and for reads of them all (the SQL query's tables). */
    heads,
    /** The versions' declaration (the bench sends their queries bare). */
    versions,
    get,
    getExisting,
    getMany,
    getVersion,

    /**
     * Creates a head, without versions unless `firstVersion` is given; the name must be free in
     * the organization (409), and the `guard` item's condition must hold (its own failure).
     */
    create: async (
      orgId: string,
      name: string,
      creator: { org_id: string; user_id: string },
      options: CreateHeadOptions<V> = {},
    ): Promise<{ id: string }> => {
      const id = options.id ?? newId();
      const { firstVersion, guard } = options;
      if (firstVersion) ensureRecordFits(firstVersion.record, `${label} version`);
      const head = {
        ...options.attributes,
        ...firstVersion?.headAttributes,
        id,
        name,
        deprecated: false,
        created_at: nowIso(),
        creator,
        ...(firstVersion ? { latest_version: firstVersion.record.version } : {}),
      };
      const items = [
        heads.create(orgId, head),
        heads.guardPut(orgId, 'name', head),
        ...(firstVersion ? [versions.create(orgId, { ...firstVersion.record, head_id: id })] : []),
        ...(guard ? [guard.item] : []),
      ];
      await transactWrite(items, (error) =>
        guard && failedConditions(error).includes(items.length - 1)
          ? guard.failure()
          : new ConflictError(`A ${label} named '${name}' already exists.`),
      );
      return { id };
    },

    list: async (orgId: string, query: HeadListQuery): Promise<Paged<HeadView>> => {
      // Each item is parsed once, for the filter and for the page.
      const parsed = new WeakMap<Item, HeadView>();
      const parsedHead = (item: Item): HeadView => {
        const head = parsed.get(item) ?? listedHead.parse(item);
        parsed.set(item, head);
        return head;
      };
      const keep = (item: Item) => {
        const head = parsedHead(item);
        return (query.deprecated === undefined || head.deprecated === query.deprecated) && query.visible(head);
      };
      return pageOfQuery(
        orgId,
        entity,
        query,
        (startKey) =>
          query.ids && query.ids.length > 0
            ? keysPage(
                query.ids.map((id) => headKey(orgId, id)),
                startKey,
                { limit: query.limit, keep },
              )
            : queryPage(heads.query(orgId, {}), { limit: query.limit, startKey, keep }),
        parsedHead,
      );
    },

    /**
     * Adds the next version. Its number is claimed with a conditional write on the head, so
     * two concurrent calls never both get N: the loser reads again and rebuilds on the winner's
     * version (or fails with 409 when the caller asked for a specific number).
     */
    appendVersion: async (orgId: string, id: string, options: AppendVersionOptions<V>): Promise<V> => {
      for (let attempt = 0; attempt < appendAttempts; attempt += 1) {
        const head = await getExisting(orgId, id, true);
        if (attempt === 0) options.authorize?.(head);
        const next = (head.latest_version ?? 0) + 1;
        if (options.expectedVersion !== undefined && options.expectedVersion !== next) {
          const message = `The next version of ${label} ${id} is ${next}, not ${options.expectedVersion} as the version parameter says.`;
          throw options.versionMismatch?.(message) ?? new ConflictError(message);
        }
        const latest = head.latest_version === null ? undefined : await getVersion(orgId, id, head.latest_version);
        const record = await options.build(latest, next);
        if (await putVersion(orgId, id, record, head.latest_version, options.headAttributes?.(record))) return record;
      }
      throw new ConflictError(`Other versions of ${label} ${id} are being created at the same time; retry.`);
    },

    /** Versions of a head, as listed (without their internal ids); 404 when the head does not exist. */
    listVersions: async (
      orgId: string,
      id: string,
      query: VersionListQuery,
      authorize: (head: VersionedHead) => void,
    ): Promise<Paged<Omit<V, 'id'>>> => {
      const pageOfRange = (range: { low: number; high: number } | undefined) => {
        const filters = { id, range, descending: query.descending };
        return pageOf(
          orgId,
          () => listFingerprint(`${entity}-versions`, filters),
          query.continuationToken,
          (startKey) =>
            queryPage(
              versions.query(
                orgId,
                {},
                {
                  ...(range
                    ? {
                        between: [
                          versions.sortOf({ head_id: id, version: range.low }),
                          versions.sortOf({ head_id: id, version: range.high }),
                        ],
                      }
                    : { prefix: `${id}#` }),
                  forward: !query.descending,
                },
              ),
              { limit: query.limit, startKey },
            ),
          (item) => {
            const { id: _id, ...listed } = toVersion(item);
            return listed;
          },
        );
      };
      const reading = getExisting(orgId, id);
      if (query.versions?.kind === 'latest') {
        const head = await reading;
        authorize(head);
        return pageOfRange({ low: head.latest_version ?? 0, high: head.latest_version ?? 0 });
      }
      // The page does not depend on the head: it is read meanwhile, and shown only once the head says the caller may.
      const page = pageOfRange(query.versions);
      page.catch(() => undefined);
      authorize(await reading);
      return page;
    },

    /**
     * Deprecates a head: 404 when missing, 409 when already deprecated, 400 while an active service
     * uses it. The write is conditioned on the same state, so a service activated meanwhile wins.
     */
    deprecate: async (orgId: string, id: string, authorize: (head: VersionedHead) => void): Promise<void> => {
      for (let attempt = 0; attempt < appendAttempts; attempt += 1) {
        const head = await getExisting(orgId, id, true);
        if (attempt === 0) authorize(head);
        if (head.deprecated) throw new ConflictError(`${capitalized(label)} ${id} is already deleted.`);
        if (head.active_services > 0) {
          throw new BadRequestError(
            `${capitalized(label)} ${id} is used by an active service; deactivate the service first.`,
          );
        }
        try {
          await updateItem({
            Key: headKey(orgId, id),
            UpdateExpression: 'SET deprecated = :true',
            ConditionExpression:
              'deprecated = :false AND (attribute_not_exists(active_services) OR active_services <= :zero)',
            ExpressionAttributeValues: { ':true': true, ':false': false, ':zero': 0 },
          });
          return;
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
        }
      }
      throw new ConflictError(`${capitalized(label)} ${id} is being changed at the same time; retry.`);
    },

    /**
     * The transaction item that counts one more (+1) or one fewer (-1) active service using the
     * record. Gaining a user requires the record to exist, have a version and not be deprecated.
     */
    activeServiceDelta: (orgId: string, id: string, delta: 1 | -1) => ({
      Update: {
        Key: headKey(orgId, id),
        UpdateExpression: 'ADD active_services :delta',
        ...(delta > 0
          ? {
              ConditionExpression: 'attribute_exists(pk) AND attribute_exists(latest_version) AND deprecated = :false',
              ExpressionAttributeValues: { ':delta': delta, ':false': false },
            }
          : { ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':delta': delta } }),
      },
    }),
  };
};

export type VersionedEntity<V extends StoredVersion> = ReturnType<typeof defineVersionedEntity<V>>;
