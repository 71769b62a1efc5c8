import { presignedReadUrl } from '../aws/bucket';
import { pageBody } from '../data/paging';
import type { Caller } from '../kernel/caller';
import { NotFoundError } from '../kernel/errors';
import { idBoundAt } from '../kernel/ids';
import { asIfMissing, hasPermission, permissionCheck, requirePermission } from '../kernel/permissions';
import { requireOrganization } from '../organization/index';
import type { CallRecord } from './call-record';
import { getCall, getCallBySid, queryCalls, queryTimeline } from './call-repository';
import { callAttributes, callView } from './call-views';
import type { CallDirection, CallStatus, CallView } from './schemas';

/** Reading calls: the list, one call, its timeline and its recording's two channels. */

const missing = (reference: string) => new NotFoundError(`Call ${reference} not found.`);

/** The call a path names: Twilio's SID, or the id of a call Twilio never placed. */
export const callByReference = (orgId: string, reference: string): Promise<CallRecord | undefined> =>
  reference.startsWith('CA') ? getCallBySid(orgId, reference) : getCall(orgId, reference);

/**
 * Loads a call for `permission`, answering a caller who may not even read it as if it did not
 * exist (403 only to one who may read it).
 */
export const callFor = async (
  orgId: string,
  caller: Caller,
  reference: string,
  permission: 'Call:GetCall' | 'Call:GetCallRecording' | 'Call:TransferCall',
): Promise<CallRecord> => {
  const call = await callByReference(orgId, reference);
  if (!call) throw missing(reference);
  const attributes = callAttributes(call);
  asIfMissing(
    () => requirePermission(caller, permission, attributes),
    () => missing(reference),
    () => hasPermission(caller, 'Call:GetCall', attributes),
  );
  return call;
};

export interface ListCallsQuery {
  direction?: CallDirection;
  status?: CallStatus[];
  phone_number?: string;
  created_after?: string;
  created_before?: string;
  limit: number;
  continuation_token: number;
}

/** A page of the calls the caller may see, newest first, filtered by direction, status, number and time. */
export const listCalls = async (orgId: string, caller: Caller, query: ListCallsQuery) => {
  await requireOrganization(orgId);
  const visible = permissionCheck(caller, 'Call:GetCall');
  const page = await queryCalls(orgId, {
    direction: query.direction,
    statuses: query.status?.length ? query.status : undefined,
    phoneNumber: query.phone_number,
    idRange: [
      query.created_after ? idBoundAt(new Date(query.created_after), 'first') : '0',
      query.created_before ? idBoundAt(new Date(query.created_before), 'last') : 'g',
    ],
    visible: (call) => visible(callAttributes(call)),
    limit: query.limit,
    continuationToken: query.continuation_token,
  });
  return pageBody('calls', page, callView);
};

export const getCallDetails = async (orgId: string, caller: Caller, reference: string): Promise<CallView> =>
  callView(await callFor(orgId, caller, reference, 'Call:GetCall'));

/** The call's timeline: speech of both sides, turns, barge-ins, DTMF, the transfer, in time order. */
export const getCallTimeline = async (orgId: string, caller: Caller, reference: string) => {
  const call = await callFor(orgId, caller, reference, 'Call:GetCall');
  const entries = await queryTimeline(orgId, call.id);
  return {
    call_sid: call.call_sid,
    media_started_at: call.media_started_at,
    duration_ms: entries.reduce((end, entry) => Math.max(end, entry.end_ms), 0),
    entries,
  };
};

/** How long the recording's presigned URLs last. */
const recordingUrlSeconds = 15 * 60;

/** Presigned URLs of the call's two channels (the caller in, the agent out) and what they hold; 404 without a recording. */
export const getCallRecording = async (orgId: string, caller: Caller, reference: string) => {
  const call = await callFor(orgId, caller, reference, 'Call:GetCallRecording');
  const recording = call.recording;
  if (!recording || !call.call_sid) throw new NotFoundError(`Call ${reference} has no recording.`);
  const [inboundUrl, outboundUrl] = await Promise.all([
    presignedReadUrl(recording.inbound_key, recordingUrlSeconds),
    presignedReadUrl(recording.outbound_key, recordingUrlSeconds),
  ]);
  return {
    call_sid: call.call_sid,
    inbound_url: inboundUrl,
    outbound_url: outboundUrl,
    expires_at: new Date(Date.now() + recordingUrlSeconds * 1000).toISOString(),
    metadata: {
      direction: call.direction,
      duration_seconds: recording.duration_seconds,
      started_at: recording.started_at,
      inbound: { format: 'wav' as const, sample_rate: recording.sample_rate, size_bytes: recording.inbound_bytes },
      outbound: { format: 'wav' as const, sample_rate: recording.sample_rate, size_bytes: recording.outbound_bytes },
    },
  };
};
