import { retentionOf } from '../conversation/retention';
import { newId, nowIso } from '../kernel/ids';
import { getOrganization, retentionDaysOf } from '../organization/index';
import type { PhoneNumberRecord } from '../phone-number/index';
import { type CallRecord, newCallOutcome, statusRank } from './call-record';
import { insertInboundCall } from './call-repository';
import type { CallStatus } from './schemas';

/**
 * Records a call to a number of the organization the first time it is heard of (a status
 * callback, its media stream starting), or finds the record made by the first: one per CallSid.
 */
export const recordInboundCall = async (
  number: PhoneNumberRecord,
  call: { callSid: string; from: string; status: CallStatus; userId?: string; conversationId?: string },
): Promise<CallRecord> => {
  const organization = await getOrganization(number.org_id);
  const createdAt = nowIso();
  return insertInboundCall({
    id: newId(),
    org_id: number.org_id,
    call_sid: call.callSid,
    direction: 'inbound',
    status: call.status,
    status_rank: statusRank[call.status],
    from: call.from,
    to: number.phone_number,
    phone_number_id: number.id,
    service_id: number.service_id,
    conversation_id: call.conversationId ?? null,
    user_id: call.userId ?? null,
    reason: null,
    goal: null,
    metadata: {},
    voicemail_message: null,
    ...newCallOutcome,
    created_at: createdAt,
    started_at: call.status === 'in-progress' ? createdAt : null,
    creator: null,
    ...retentionOf(organization ? retentionDaysOf(organization) : 0, createdAt),
  });
};
