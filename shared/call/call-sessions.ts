import { logger } from '../aws/observability';
import { config } from '../kernel/config';
import { ConflictError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { twilioCredentialsOf } from '../phone-number/credentials';
import type { PhoneNumberRecord } from '../phone-number/index';
import { isRecorded } from '../phone-number/phone-numbers';
import { callConversationTarget, type PhoneCall } from '../phone-number/twilio-calls';
import { getService } from '../service/index';
import type { SessionDirector } from '../voice/director';
import type { VoiceTap } from '../voice/events';
import type { VoiceSessionTarget } from '../voice/session';
import type { CallRecord } from './call-record';
import { recordingTap } from './call-recording';
import { getCall, putTimelineEntries, setCallFieldOnce, setCallFields } from './call-repository';
import { timelineTap } from './call-timeline';
import { recordInboundCall } from './inbound-calls';
import { isMachineGreetingOver } from './schemas';
import { updateTwilioCall } from './twilio-rest-client';

/**
 * A call's voice session: the media stream of a call (inbound, or placed by the platform and
 * answered) runs on the voice engine like any session, in the conversation of the call, with what
 * only a call has: its record learns the session's conversation and when its media started, its
 * timeline and its two-channel recording are taps on the session, and an outbound call's
 * answering machine is left a message.
 */

export interface CallSession {
  call: CallRecord;
  target: VoiceSessionTarget;
  taps: VoiceTap[];
  /** What a recorded call hears first, where its number says so. */
  announcement?: string;
  director?: SessionDirector;
}

/** When the call's media began (its session opened): the 0 of its timeline and of both recordings. */
interface MediaClock {
  startedAt?: string;
}

/** A write of the call's record a session makes as it goes: a failure is logged, never ends the call. */
const recordQuietly = (what: string, write: Promise<unknown>) =>
  void write.catch((error: unknown) => logger.warn(`call record: ${what} not stored`, { error: error as Error }));

/** The call's record follows its session: the conversation it talks in, when its media (the timeline's 0) began. */
const recordTap = (call: CallRecord, clock: MediaClock): VoiceTap => ({
  told: (event) => {
    if (event.type !== 'session-opened') return;
    clock.startedAt = nowIso();
    recordQuietly('media start', setCallFieldOnce(call, 'media_started_at', clock.startedAt));
    const conversationId = event.session.conversationId;
    if (call.conversation_id !== conversationId) {
      recordQuietly('conversation', setCallFields(call, { conversation_id: conversationId }));
    }
  },
});

/** How long a session waits for the answering machine detection's verdict: Twilio gives it within its 30 s, past a long greeting's end. */
const verdictWaitMs = 90_000;

/** Milliseconds on the call's media clock (the timeline's and the recordings' 0) now. */
const mediaClockNow = (call: CallRecord): number =>
  Math.max(0, Date.now() - (call.media_started_at ? Date.parse(call.media_started_at) : Date.now()));

/** The message an answering machine is left: the call's, else its service's; none for a fax. */
const voicemailOf = async (call: CallRecord, answeredBy: string): Promise<string> => {
  if (answeredBy === 'fax') return '';
  if (call.voicemail_message) return call.voicemail_message;
  const service = call.service_id ? await getService(call.org_id, call.service_id) : undefined;
  return service?.voicemail_message ?? '';
};

/**
 * The message left: recorded on the call (when, and on its timeline), then the call ended with
 * Twilio (`Status=completed`); Twilio's refusal is logged (the call ends with the stream anyway).
 */
const recordVoicemailLeft = async (
  call: CallRecord,
  number: PhoneNumberRecord,
  text: string,
  spokenMs: number,
): Promise<void> => {
  if (text) {
    const endMs = mediaClockNow(call);
    await Promise.all([
      setCallFieldOnce(call, 'voicemail_left_at', nowIso()),
      putTimelineEntries(call, [
        {
          kind: 'voicemail',
          start_ms: Math.max(0, endMs - Math.round(spokenMs)),
          end_ms: endMs,
          text,
          interaction_id: null,
          timings: null,
        },
      ]),
    ]);
  }
  if (!call.call_sid) return;
  await updateTwilioCall(await twilioCredentialsOf(number), call.call_sid, { Status: 'completed' }).catch(
    (error: unknown) => logger.warn('the call was not ended after its voicemail', { error: error as Error }),
  );
};

/**
 * An outbound call's answering machine, as the session learns of it: Twilio's asynchronous
 * detection calls back whichever function takes it, which records who answered; the session reads
 * the call's record until it knows. A machine whose greeting ended is left the voicemail message,
 * then the call ends; a person (or a verdict that never came) talks on.
 */
const answeringMachineDirector = (placed: CallRecord, number: PhoneNumberRecord): SessionDirector => {
  const until = Date.now() + verdictWaitMs;
  return {
    next: async () => {
      if (Date.now() > until) return 'done';
      const call = await getCall(placed.org_id, placed.id, true);
      const answeredBy = call?.answered_by;
      if (!call || !answeredBy || answeredBy === 'machine_start') return undefined;
      if (!isMachineGreetingOver(answeredBy) && answeredBy !== 'fax') return 'done';
      const text = await voicemailOf(call, answeredBy);
      return {
        type: 'leave-message',
        text,
        left: (spokenMs) => recordVoicemailLeft(call, number, text, spokenMs),
      };
    },
  };
};

/**
 * The session of a call whose media stream opened: an outbound call talks in the conversation
 * placed with it (the agent opens once the callee speaks or after a short silence; an answering
 * machine is left the voicemail message); an inbound call
 * is recorded (once per CallSid, whatever heard of it first) and talks where a phone call does
 * (`callConversationTarget`). Refused (409) for an outbound call whose conversation is gone.
 */
export const callSessionOf = async (number: PhoneNumberRecord, phoneCall: PhoneCall): Promise<CallSession> => {
  if (phoneCall.callId) {
    const placed = await getCall(phoneCall.orgId, phoneCall.callId, true);
    if (!placed?.conversation_id || placed.call_sid !== phoneCall.callSid) {
      throw new ConflictError(`Call ${phoneCall.callSid} has no conversation to talk in.`);
    }
    const target = { conversationId: placed.conversation_id, opensAfterSilenceMs: config.outboundCallOpeningSilenceMs };
    return { ...callTaps(placed, number), target, director: answeringMachineDirector(placed, number) };
  }
  const [call, target] = await Promise.all([
    recordInboundCall(number, {
      callSid: phoneCall.callSid,
      from: phoneCall.from,
      status: 'in-progress',
      userId: phoneCall.userId,
    }),
    callConversationTarget(phoneCall),
  ]);
  if (call.user_id === null) recordQuietly('caller', setCallFields(call, { user_id: phoneCall.userId }));
  return { ...callTaps(call, number), target };
};

/** What every call's session has: its record kept up to date, its timeline and, where its number says so, its recording. */
const callTaps = (call: CallRecord, number: PhoneNumberRecord): Pick<CallSession, 'call' | 'taps' | 'announcement'> => {
  const clock: MediaClock = {};
  const recorded = isRecorded(number);
  return {
    call,
    taps: [recordTap(call, clock), timelineTap(call), ...(recorded ? [recordingTap(call, () => clock.startedAt)] : [])],
    ...(recorded && number.recording_announcement ? { announcement: number.recording_announcement } : {}),
  };
};
