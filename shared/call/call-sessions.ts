import { logger } from '../aws/observability';
import { config } from '../kernel/config';
import { ConflictError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import type { PhoneNumberRecord } from '../phone-number/index';
import { callConversationTarget, type PhoneCall } from '../phone-number/twilio-calls';
import type { VoiceTap } from '../voice/events';
import type { VoiceSessionTarget } from '../voice/session';
import type { CallRecord } from './call-record';
import { getCall, setCallFieldOnce, setCallFields } from './call-repository';
import { recordInboundCall } from './inbound-calls';

/**
 * A call's voice session: the media stream of a call (inbound, or placed by the platform and
 * answered) runs on the voice engine like any session, in the conversation of the call, with what
 * only a call has: its record learns the session's conversation and when its media started.
 */

export interface CallSession {
  call: CallRecord;
  target: VoiceSessionTarget;
  taps: VoiceTap[];
}

/** A write of the call's record a session makes as it goes: a failure is logged, never ends the call. */
const recordQuietly = (what: string, write: Promise<unknown>) =>
  void write.catch((error: unknown) => logger.warn(`call record: ${what} not stored`, { error: error as Error }));

/** The call's record follows its session: the conversation it talks in, who talks, when its media (the timeline's 0) began. */
const recordTap = (call: CallRecord): VoiceTap => ({
  told: (event) => {
    if (event.type !== 'session-opened') return;
    recordQuietly('media start', setCallFieldOnce(call, 'media_started_at', nowIso()));
    const conversationId = event.session.conversationId;
    if (call.conversation_id !== conversationId) {
      recordQuietly('conversation', setCallFields(call, { conversation_id: conversationId }));
    }
  },
});

/**
 * The session of a call whose media stream opened: an outbound call talks in the conversation
 * placed with it (the agent opens once the callee speaks or after a short silence); an inbound call
 * is recorded (once per CallSid, whatever heard of it first) and talks where a phone call does
 * (`callConversationTarget`). Refused (409) for an outbound call whose conversation is gone.
 */
export const callSessionOf = async (number: PhoneNumberRecord, phoneCall: PhoneCall): Promise<CallSession> => {
  let call: CallRecord;
  let target: VoiceSessionTarget;
  if (phoneCall.callId) {
    const placed = await getCall(phoneCall.orgId, phoneCall.callId, true);
    if (!placed?.conversation_id || placed.call_sid !== phoneCall.callSid) {
      throw new ConflictError(`Call ${phoneCall.callSid} has no conversation to talk in.`);
    }
    call = placed;
    target = { conversationId: placed.conversation_id, opensAfterSilenceMs: config.outboundCallOpeningSilenceMs };
  } else {
    [call, target] = await Promise.all([
      recordInboundCall(number, {
        callSid: phoneCall.callSid,
        from: phoneCall.from,
        status: 'in-progress',
        userId: phoneCall.userId,
      }),
      callConversationTarget(phoneCall),
    ]);
    if (call.user_id === null) recordQuietly('caller', setCallFields(call, { user_id: phoneCall.userId }));
  }
  return { call, target, taps: [recordTap(call)] };
};
