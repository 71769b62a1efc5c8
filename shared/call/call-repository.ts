import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { isLeaseHeld, type LeaseGrant, releaseLease, storedLeaseOf, takeLease } from '../data/lease';
import { type Paged, pageOfQuery } from '../data/paging';
import {
  batchPutItems,
  erasePartition,
  failedConditions,
  getItem,
  type Item,
  isConditionFailure,
  queryPage,
  transactWrite,
  updateItem,
} from '../data/table';
import { ConflictError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { type CallRecord, callRecord, statusRank } from './call-record';
import { type CallDirection, type CallStatus, type TimelineEntry, timelineEntry } from './schemas';

/**
 * Calls: one record per call, outbound (placed through Twilio's REST API) or inbound (a call to a
 * number of the organization), each in a partition of its own with its timeline:
 *
 *   CALL#{id}            CALL            the record
 *   CALL#{id}            T#{ms}#{id}     its timeline entries, in time order
 *   CALLSID              {call sid}      guard: Twilio's SID → the call (callbacks, the API's paths)
 *   CALLKEY              {key}           guard: an outbound call's idempotency key → the call
 *   CALLSLOT             {n}             the organization's outbound calls under way, one slot each
 *
 * The `all` index lists an organization's calls newest first (ids sort by creation time). Every
 * item of a call expires with the organization's retention (`expires_at_epoch`), its guards too.
 */

const guardExpiry = (call: { expires_at_epoch?: number }) =>
  call.expires_at_epoch === undefined ? {} : { expires_at_epoch: call.expires_at_epoch };

export const calls = defineEntity({
  name: 'call',
  token: 'CALL',
  schema: callRecord,
  partition: (call: { id: string }) => [call.id],
  sort: () => 'CALL',
  indexes: {
    all: { index: 'gsi1', sort: (call) => call.id },
  },
  guards: {
    sid: {
      token: 'CALLSID',
      value: (call) => call.call_sid ?? '',
      holds: (call) => ({ call_id: call.id, ...guardExpiry(call) }),
    },
    key: {
      token: 'CALLKEY',
      value: (call) => call.idempotency_key ?? '',
      holds: (call) => ({ call_id: call.id, ...guardExpiry(call) }),
    },
  },
  // Each call's partition goes whole, with its timeline; then the guards.
  erase: async (orgId: string): Promise<void> => {
    for (;;) {
      const page = await queryPage(calls.queryIndex(orgId, 'all', {}), { limit: 100, keysOnly: true });
      for (const item of page.items) await erasePartition(item.pk as string);
      if (page.items.length === 0) break;
    }
    await erasePartition(calls.guardKey(orgId, 'sid', '').pk);
    await erasePartition(calls.guardKey(orgId, 'key', '').pk);
  },
});

const timelineEntryRecord = timelineEntry.extend({ id: z.string(), call_id: z.string() });

export const callTimelineEntries = defineEntity({
  name: 'call-timeline-entry',
  within: calls,
  schema: timelineEntryRecord.extend({ expires_at_epoch: z.number().int().optional() }),
  partition: (entry: { call_id: string }) => [entry.call_id],
  sortPrefix: 'T#',
  sort: (entry: { start_ms: number; id: string }) => `${String(entry.start_ms).padStart(10, '0')}#${entry.id}`,
});

/** The organization's outbound calls under way: one slot each, held by a lease until the call ends. */
export const outboundCallSlots = defineEntity({
  name: 'outbound-call-slot',
  token: 'CALLSLOT',
  schema: z.object({ slot: z.number().int() }),
  sort: (of: { slot: number }) => String(of.slot).padStart(4, '0'),
});

const keyTaken = (key: string) =>
  new ConflictError(`The idempotency key ${key} already names a call.`, { retryAfterSeconds: 1 });

export const getCall = (orgId: string, id: string, consistent = false): Promise<CallRecord | undefined> =>
  calls.get(orgId, { id }, consistent);

const callOfGuard = async (
  orgId: string,
  guard: 'sid' | 'key',
  value: string,
  consistent = false,
): Promise<CallRecord | undefined> => {
  const held = await getItem(calls.guardKey(orgId, guard, value), consistent);
  return typeof held?.call_id === 'string' ? getCall(orgId, held.call_id, consistent) : undefined;
};

/** The call Twilio knows by this SID. */
export const getCallBySid = (orgId: string, callSid: string, consistent = false): Promise<CallRecord | undefined> =>
  callOfGuard(orgId, 'sid', callSid, consistent);

/** The outbound call an idempotency key placed (or is placing). */
export const getCallByKey = (orgId: string, key: string): Promise<CallRecord | undefined> =>
  callOfGuard(orgId, 'key', key, true);

/** Stores an outbound call about to be placed, with its key's guard; 409 when the key names a call already. */
export const insertPlacingCall = async (call: CallRecord): Promise<void> => {
  await transactWrite([calls.create(call.org_id, call), calls.guardPut(call.org_id, 'key', call)], () =>
    keyTaken(call.idempotency_key ?? ''),
  );
};

/** Removes a call that was never placed (what it needed refused it), with its key's guard. */
export const removePlacingCall = async (call: CallRecord): Promise<void> => {
  await transactWrite([
    {
      Delete: {
        Key: calls.key(call.org_id, call),
        ConditionExpression: 'placement = :placing AND attempt = :attempt',
        ExpressionAttributeValues: { ':placing': 'placing', ':attempt': call.attempt ?? 1 },
      },
    },
    { Delete: { Key: calls.guardKey(call.org_id, 'key', call.idempotency_key ?? '') } },
  ]);
};

/** Takes a failed call's key for another attempt; false when another request took it first. */
export const retryFailedCall = (call: CallRecord, at: string): Promise<boolean> =>
  calls.setFields(
    call.org_id,
    call,
    {
      placement: 'placing',
      attempt: (call.attempt ?? 1) + 1,
      status: 'queued',
      status_rank: statusRank.queued,
      error: null,
      ended_at: null,
      created_at: at,
    },
    { placement: 'failed', attempt: call.attempt ?? 1 },
  );

/** Records what placing the call gave: Twilio's SID (and its guard), the conversation, the slot it holds. */
export const markCallPlaced = async (
  call: CallRecord,
  placed: { callSid: string; conversationId: string; slot: NonNullable<CallRecord['slot']> },
): Promise<void> => {
  const record = { ...call, call_sid: placed.callSid };
  await transactWrite([
    {
      Update: {
        Key: calls.key(call.org_id, call),
        UpdateExpression:
          'SET call_sid = :sid, conversation_id = :conversation, placed_conversation_id = :conversation, placement = :placed, slot = :slot',
        ConditionExpression: 'placement = :placing AND attempt = :attempt',
        ExpressionAttributeValues: {
          ':sid': placed.callSid,
          ':conversation': placed.conversationId,
          ':placed': 'placed',
          ':placing': 'placing',
          ':attempt': call.attempt ?? 1,
          ':slot': placed.slot,
        },
      },
    },
    calls.guardPut(call.org_id, 'sid', record),
  ]);
};

/** Records that Twilio refused (or never answered) the call: failed, with its message. */
export const markCallFailed = (
  call: CallRecord,
  error: { message: string; code: number | null },
  at: string,
): Promise<boolean> =>
  calls.setFields(
    call.org_id,
    call,
    {
      placement: 'failed',
      status: 'failed',
      status_rank: statusRank.failed,
      error,
      ended_at: at,
      conversation_id: null,
    },
    { placement: 'placing', attempt: call.attempt ?? 1 },
  );

/**
 * Stores an inbound call, with its SID's guard; the call already recorded (another callback, the
 * media stream) when the SID is taken.
 */
export const insertInboundCall = async (call: CallRecord): Promise<CallRecord> => {
  try {
    await transactWrite([calls.create(call.org_id, call), calls.guardPut(call.org_id, 'sid', call)]);
    return call;
  } catch (error) {
    if (failedConditions(error).length === 0) throw error;
    const existing = await getCallBySid(call.org_id, call.call_sid ?? '', true);
    if (!existing) throw error;
    return existing;
  }
};

/**
 * Moves the call to `status` with `fields` (its times, who answered) when the status is later in
 * the call's life than the one stored: callbacks arrive out of order and more than once.
 * Returns the record as it is after the write, or undefined when it was not later.
 */
export const advanceCallStatus = async (
  orgId: string,
  id: string,
  status: CallStatus,
  fields: Record<string, unknown>,
): Promise<CallRecord | undefined> => {
  const all = { status, status_rank: statusRank[status], ...fields };
  const names = Object.keys(all);
  try {
    const after = await updateItem({
      Key: calls.key(orgId, { id }),
      UpdateExpression: `SET ${names.map((_, index) => `#f${index} = :v${index}`).join(', ')}`,
      ConditionExpression: 'attribute_exists(pk) AND status_rank < :rank',
      ExpressionAttributeNames: Object.fromEntries(names.map((name, index) => [`#f${index}`, name])),
      ExpressionAttributeValues: {
        ...Object.fromEntries(Object.values(all).map((value, index) => [`:v${index}`, value])),
        ':rank': statusRank[status],
      },
      ReturnValues: 'ALL_NEW',
    });
    return after ? calls.parse(after) : undefined;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** Sets fields of a call when `expected` still holds; false otherwise. */
export const setCallFields = (
  call: Pick<CallRecord, 'org_id' | 'id'>,
  fields: Partial<CallRecord>,
  expected: Partial<CallRecord> = {},
): Promise<boolean> => calls.setFields(call.org_id, call, fields, expected);

/** Sets fields the first time only (who answered, when media started): false when already set. */
export const setCallFieldOnce = async (
  call: Pick<CallRecord, 'org_id' | 'id'>,
  field: 'answered_by' | 'media_started_at' | 'voicemail_left_at' | 'transfer' | 'recording',
  value: unknown,
): Promise<boolean> => {
  try {
    await updateItem({
      Key: calls.key(call.org_id, call),
      UpdateExpression: 'SET #field = :value',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#field) OR #field = :null)',
      ExpressionAttributeNames: { '#field': field },
      ExpressionAttributeValues: { ':value': value, ':null': null },
    });
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

export interface CallListQuery {
  direction?: CallDirection;
  statuses?: CallStatus[];
  phoneNumber?: string;
  /** Ids bounding the creation time (ids sort by it). */
  idRange: [string, string];
  visible: (call: CallRecord) => boolean;
  limit: number;
  continuationToken: number;
}

/** A page of the organization's calls, newest first: one index read, filters applied to what it reads (bounded). */
export const queryCalls = (orgId: string, query: CallListQuery): Promise<Paged<CallRecord>> => {
  const keep = (item: Item): boolean => {
    const call = calls.parse(item);
    return (
      (query.direction === undefined || call.direction === query.direction) &&
      (query.statuses === undefined || query.statuses.includes(call.status)) &&
      (query.phoneNumber === undefined || call.from === query.phoneNumber || call.to === query.phoneNumber) &&
      query.visible(call)
    );
  };
  return pageOfQuery(
    orgId,
    'calls',
    query,
    (startKey) =>
      queryPage(calls.queryIndex(orgId, 'all', {}, { between: query.idRange, forward: false }), {
        limit: query.limit,
        startKey,
        keep,
      }),
    calls.parse,
  );
};

/** The most timeline entries a call keeps: an hour's call of short turns stays well under it. */
export const maxTimelineEntries = 5000;

/** The call's timeline, in time order (at most {@link maxTimelineEntries}). */
export const queryTimeline = async (orgId: string, callId: string): Promise<TimelineEntry[]> => {
  const page = await queryPage(callTimelineEntries.query(orgId, { call_id: callId }), {
    limit: maxTimelineEntries,
  });
  return page.items.map((item) => {
    const { id: _id, call_id: _call, expires_at_epoch: _expires, ...entry } = callTimelineEntries.parse(item);
    return entry;
  });
};

/** Stores timeline entries of a call (batched; an entry's id makes a repeated write the same item). */
export const putTimelineEntries = async (
  call: Pick<CallRecord, 'org_id' | 'id' | 'expires_at_epoch'>,
  entries: readonly (TimelineEntry & { id?: string })[],
): Promise<void> => {
  await batchPutItems(
    entries.map((entry) =>
      callTimelineEntries.item(call.org_id, {
        ...entry,
        id: entry.id ?? newId(),
        call_id: call.id,
        ...guardExpiry(call),
      }),
    ),
  );
};

/** How often taking a slot is tried again when another request took the free one seen first. */
const slotAttempts = 3;

/**
 * Takes one of the organization's `capacity` slots for an outbound call, held for `durationMs`
 * (the longest a call can last: a slot whose call's end was never heard frees itself then);
 * undefined when every slot is held.
 */
export const holdOutboundCallSlot = async (
  orgId: string,
  capacity: number,
  durationMs: number,
): Promise<{ number: number; token: number } | undefined> => {
  for (let attempt = 0; attempt < slotAttempts; attempt += 1) {
    const page = await queryPage(outboundCallSlots.query(orgId, {}), { limit: capacity, consistent: true });
    const held = new Set(
      page.items.filter((item) => isLeaseHeld(storedLeaseOf(item))).map((item) => outboundCallSlots.parse(item).slot),
    );
    const free = Array.from({ length: capacity }, (_, slot) => slot).find((slot) => !held.has(slot));
    if (free === undefined) return undefined;
    const taken = await takeLease(outboundCallSlots.key(orgId, { slot: free }), {
      durationMs,
      setIfAbsent: { entity: outboundCallSlots.name, slot: free },
    });
    if (taken) return { number: free, token: taken.grant.token };
  }
  return undefined;
};

/** Gives an outbound call's slot back (a slot taken again since is left alone). */
export const releaseOutboundCallSlot = (orgId: string, slot: { number: number; token: number }): Promise<void> => {
  const grant: LeaseGrant = { key: outboundCallSlots.key(orgId, { slot: slot.number }), token: slot.token, untilMs: 0 };
  return releaseLease(grant);
};
