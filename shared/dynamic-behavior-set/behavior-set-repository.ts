import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { byFieldThenId, uniqueName } from '../data/key-parts';
import {
  deleteItem,
  failedConditions,
  type Item,
  queryAll,
  queryPage,
  type TransactItem,
  transactWrite,
} from '../data/table';
import { ensureRecordFits } from '../data/versioned-entity';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { sortableValue } from '../kernel/list-params';
import { creatorInfo } from '../kernel/schemas';
import { behaviorActionRecord, behaviorInvocationRecord } from './schemas';

/*
 * Entities (partition, then sort key):
 *   set                  DBS                   {setId}                 (creation order)
 *     gsi1 (sort by updated_at)  {updated_at}#{id}
 *     gsi2 (by is_active)        {0|1}#{id}       (a turn reads the active block only)
 *   active-name guard    DBS_ACTIVE_NAME       {name}                  (one active set per name)
 *   version              DBS_VERSION           {setId}#{version, zero-padded}
 *   invocation           DBS_INVOCATION        {setId}#{invocationId}  (ids sort by invocation time)
 * The set carries its latest version's number and triggers, written in the transaction that
 * adds the version, so search and matching find them without reading every version.
 */

const storedSet = z.object({
  id: z.string(),
  name: z.string(),
  is_active: z.boolean(),
  applied_to_services: z.array(z.string()),
  tags: z.record(z.string(), z.string().nullable()),
  creator: creatorInfo,
  updated_by: creatorInfo,
  created_at: z.string(),
  updated_at: z.string(),
  latest_version: z.number().int(),
  latest_triggers: z.array(z.string()),
  /** Every write is conditioned on the revision it read. */
  revision: z.number().int(),
});
export type StoredBehaviorSet = z.infer<typeof storedSet>;

const storedVersion = z.object({
  id: z.string(),
  org_id: z.string(),
  dynamic_behavior_set_id: z.string(),
  version: z.number().int(),
  conversation_triggers: z.array(z.string()),
  actions: z.array(behaviorActionRecord),
  created_at: z.string(),
  creator: creatorInfo,
  /** The embedding model of `trigger_embeddings`; vectors of another model are not comparable. */
  embedding_model: z.string(),
  /** One base64 float32 vector per trigger, computed when the version was created. */
  trigger_embeddings: z.array(z.string()),
});
export type StoredBehaviorVersion = z.infer<typeof storedVersion>;

export const behaviorSets = defineEntity({
  name: 'dynamic-behavior-set',
  token: 'DBS',
  schema: storedSet,
  sort: (set: { id: string }) => set.id,
  indexes: {
    updated_at: { index: 'gsi1', sort: byFieldThenId('updated_at') },
    is_active: { index: 'gsi2', sort: byFieldThenId('is_active') },
  },
  guards: {
    'active-name': uniqueName('DBS_ACTIVE_NAME', (set) => ({ dynamic_behavior_set_id: set.id })),
  },
});

export const behaviorVersions = defineEntity({
  name: 'dynamic-behavior-set-version',
  token: 'DBS_VERSION',
  schema: storedVersion,
  sort: (version: { dynamic_behavior_set_id: string; version: number }) =>
    `${version.dynamic_behavior_set_id}#${sortableValue(version.version)}`,
});

export const behaviorInvocations = defineEntity({
  name: 'dynamic-behavior-invocation',
  token: 'DBS_INVOCATION',
  schema: behaviorInvocationRecord,
  sort: (invocation: { set_id: string; _id: string }) => `${invocation.set_id}#${invocation._id}`,
});

/** How many sets of an organization search, filter values and matching consider (documented bound). */
export const maxSetsPerOrganization = 1000;

export class StaleBehaviorSetError extends ConflictError {
  constructor(setId: string) {
    super(`Dynamic behavior set ${setId} was changed by another request at the same time; retry.`);
    this.name = 'StaleBehaviorSetError';
  }
}

const activeNameTaken = (name: string) =>
  new ConflictError(`An active dynamic behavior set named '${name}' already exists.`);

export const getBehaviorSet = (
  orgId: string,
  setId: string,
  consistent = false,
): Promise<StoredBehaviorSet | undefined> => behaviorSets.get(orgId, { id: setId }, consistent);

export const getBehaviorVersion = (orgId: string, setId: string, version: number) =>
  behaviorVersions.get(orgId, { dynamic_behavior_set_id: setId, version });

/** The versions of `keys` that exist. */
export const getBehaviorVersions = (orgId: string, keys: { setId: string; version: number }[]) =>
  behaviorVersions.getMany(
    orgId,
    keys.map((key) => ({ dynamic_behavior_set_id: key.setId, version: key.version })),
  );

/**
 * Writes a set (new when `previous` is undefined) with the changes of its active-name guard, and
 * optionally a new version, in one transaction. A changed set since `previous` was read fails
 * with `StaleBehaviorSetError`; a taken active name with 409.
 */
export const saveBehaviorSet = async (
  orgId: string,
  set: StoredBehaviorSet,
  previous: StoredBehaviorSet | undefined,
  newVersion?: StoredBehaviorVersion,
): Promise<void> => {
  const items: TransactItem[] = [];
  const failures: (() => Error)[] = [];
  const stale = () => new StaleBehaviorSetError(set.id);
  ensureRecordFits(set, 'dynamic behavior set');
  items.push({
    Put: {
      Item: behaviorSets.item(orgId, { ...set, revision: (previous?.revision ?? -1) + 1 }),
      ...(previous
        ? {
            ConditionExpression: '#revision = :revision',
            ExpressionAttributeNames: { '#revision': 'revision' },
            ExpressionAttributeValues: { ':revision': previous.revision },
          }
        : { ConditionExpression: 'attribute_not_exists(pk)' }),
    },
  });
  failures.push(stale);

  const wasActiveAs = previous?.is_active ? previous.name : undefined;
  const isActiveAs = set.is_active ? set.name : undefined;
  if (wasActiveAs !== undefined && wasActiveAs !== isActiveAs) {
    items.push({
      Delete: {
        Key: behaviorSets.guardKey(orgId, 'active-name', wasActiveAs),
        ConditionExpression: 'attribute_not_exists(pk) OR dynamic_behavior_set_id = :id',
        ExpressionAttributeValues: { ':id': set.id },
      },
    });
    failures.push(stale);
  }
  if (isActiveAs !== undefined && wasActiveAs !== isActiveAs) {
    items.push(behaviorSets.guardPut(orgId, 'active-name', set));
    failures.push(() => activeNameTaken(isActiveAs));
  }
  if (newVersion) {
    ensureRecordFits(newVersion, 'dynamic behavior set version');
    items.push(behaviorVersions.create(orgId, newVersion));
    failures.push(stale);
  }
  await transactWrite(items, (error) => (failures[failedConditions(error)[0] ?? 0] as () => Error)());
};

/** Deletes a set, its guard, its versions and its invocations. */
export const deleteBehaviorSet = async (orgId: string, set: StoredBehaviorSet): Promise<void> => {
  const items: TransactItem[] = [
    {
      Delete: {
        Key: behaviorSets.key(orgId, { id: set.id }),
        ConditionExpression: '#revision = :revision',
        ExpressionAttributeNames: { '#revision': 'revision' },
        ExpressionAttributeValues: { ':revision': set.revision },
      },
    },
  ];
  if (set.is_active) {
    items.push({
      Delete: {
        Key: behaviorSets.guardKey(orgId, 'active-name', set.name),
        ConditionExpression: 'attribute_not_exists(pk) OR dynamic_behavior_set_id = :id',
        ExpressionAttributeValues: { ':id': set.id },
      },
    });
  }
  await transactWrite(items, () => new StaleBehaviorSetError(set.id));
  // The set is gone, so nothing reads these any more; a failure here leaves records the
  // organization's erasure still removes.
  for (const entity of [behaviorVersions, behaviorInvocations]) {
    for (;;) {
      const page = await queryPage(entity.query(orgId, {}, { prefix: `${set.id}#` }), { limit: 100 });
      await Promise.all(page.items.map((item) => deleteItem({ pk: item.pk as string, sk: item.sk as string })));
      if (!page.nextKey) break;
    }
  }
};

/** The organization's sets (at most `maxSetsPerOrganization`), the active ones only when asked. */
export const allBehaviorSets = async (
  orgId: string,
  options: { activeOnly: boolean },
): Promise<StoredBehaviorSet[]> => {
  const spec = options.activeOnly
    ? behaviorSets.queryIndex(orgId, 'is_active', {}, { prefix: `${sortableValue(true)}#` })
    : behaviorSets.query(orgId, {});
  return (await queryAll(spec, maxSetsPerOrganization)).map((item: Item) => behaviorSets.parse(item));
};

export const notFoundSet = (setId: string) => new NotFoundError(`Dynamic behavior set ${setId} does not exist.`);

/**
 * The record of a turn that applied a behaviour, written with the turn's messages (in the same
 * transaction) so an invocation exists exactly when its turn does.
 */
export const behaviorInvocationItem = (
  conversation: { org_id: string; id: string; user_id: string; service_id: string },
  versionInfo: [string, number],
  turn: { newMessages: { id: string; message_type: string }[]; agentMessageId: string; innerThoughtIds: string[] },
) => {
  const now = nowIso();
  const userMessage = turn.newMessages.findLast((message) => message.message_type === 'user-message');
  const externalEvents = turn.newMessages
    .filter((message) => message.message_type === 'external-event')
    .map((message) => message.id);
  return behaviorInvocations.item(conversation.org_id, {
    set_id: versionInfo[0],
    _id: newId(),
    org_id: conversation.org_id,
    created_at: now,
    updated_at: now,
    conversation_id: conversation.id,
    service_id: conversation.service_id,
    user_id: conversation.user_id,
    initial_message_id: userMessage?.id ?? externalEvents[0] ?? turn.agentMessageId,
    agent_message_id: turn.agentMessageId,
    agent_inner_thoughts_ids: turn.innerThoughtIds,
    dynamic_behavior_set_version_info: versionInfo,
    invoked_at: now,
    external_event_message_ids: externalEvents,
  });
};
