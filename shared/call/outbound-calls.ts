import { setTimeout as sleep } from 'node:timers/promises';
import { takeToken } from '../auth/rate-limit';
import { endConversationOfCall, startConversationAwaitingAnswer } from '../conversation/call-conversations';
import { retentionOf } from '../conversation/retention';
import { type Caller, creatorOf } from '../kernel/caller';
import { config } from '../kernel/config';
import { BadGatewayError, ConflictError, NotFoundError, RateLimitedError, ValidationError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { hasPermission, requirePermission } from '../kernel/permissions';
import { requireOrganization, retentionDaysOf } from '../organization/index';
import { callerUserId } from '../phone-number/callers';
import { twilioCredentialsOf } from '../phone-number/credentials';
import { findPhoneNumber } from '../phone-number/index';
import { getService } from '../service/index';
import { serviceAttributes } from '../service/services';
import { refreshCaller } from '../user/current-caller';
import { type CallRecord, newCallOutcome, statusRank } from './call-record';
import {
  getCallByKey,
  holdOutboundCallSlot,
  insertPlacingCall,
  markCallFailed,
  markCallPlaced,
  releaseOutboundCallSlot,
  removePlacingCall,
  retryFailedCall,
} from './call-repository';
import { callAttributes } from './call-views';
import { callbackUrl } from './callback-urls';
import type { CreateOutboundCallRequest } from './schemas';
import { createTwilioCall, TwilioApiError } from './twilio-rest-client';

/**
 * Outbound calls: the agent of a service calls someone from one of the organization's numbers.
 *
 * The call is created with Twilio's REST API (`Calls.json`, the number's account and auth token):
 * Twilio rings `phone_to` from `phone_from`, asks the call's voice URL what to do once answered
 * (the answer streams the call to the voice engine, as an inbound call's), reports its progress to
 * the status callback and, through asynchronous answering machine detection that waits for a
 * machine's greeting to end, who answered. The conversation is created with the call, without its
 * opening: the agent opens once the callee speaks, or after a short silence, and `reason` and
 * `goal` are in its working memory from that first turn.
 *
 * Placing is idempotent per key: the key's guard is written with the call, before Twilio is asked,
 * so requests with one key ask Twilio once. What Twilio refuses (or never answers) leaves a failed
 * call with Twilio's message and nothing else: no conversation, no slot; the same key asks again.
 */

/** How long Twilio rings before it gives up (`no-answer`). */
const ringSeconds = 30;
/** The longest call: Twilio ends it then (`TimeLimit`), and an outbound slot whose end was never heard frees itself. */
const maxCallSeconds = 3600;
const slotDurationMs = (ringSeconds + maxCallSeconds + 60) * 1000;
/** A request finding its key's call being placed waits this long for the placement to end. */
const placementWaitMs = () => config.twilioApiTimeoutMs + 5_000;

const notTheOrganizationsNumber = () =>
  new ValidationError([
    { loc: ['body', 'phone_from'], msg: "must be one of the organization's phone numbers", type: 'value_error' },
  ]);

/** What the agent is told of the call it makes, in its working memory from its first turn. */
const callNote = (call: Pick<CallRecord, 'to' | 'reason' | 'goal'>) => ({
  context: 'outbound call',
  content: [
    `You placed this phone call to ${call.to}; the person who answers did not call you.`,
    `Reason for the call: ${call.reason}.`,
    ...(call.goal ? [`Goal of the call: ${call.goal}`] : []),
  ].join(' '),
});

const answerOf = (call: CallRecord) => ({
  call_sid: call.call_sid as string,
  status: 'queued' as const,
  conversation_id: (call.placed_conversation_id ?? call.conversation_id) as string,
});

/** The key's call once no request is placing it, waiting a bounded time for one that is. */
const settledCallOfKey = async (orgId: string, key: string): Promise<CallRecord | undefined> => {
  const deadline = Date.now() + placementWaitMs();
  for (;;) {
    const call = await getCallByKey(orgId, key);
    if (call?.placement !== 'placing' || Date.now() > deadline) return call;
    await sleep(250);
  }
};

interface Placement {
  call: CallRecord;
  number: NonNullable<Awaited<ReturnType<typeof findPhoneNumber>>>;
  callee: Caller;
  apiBase: string;
}

/**
 * Places the call of a record being placed (`placing`): a slot, the conversation, then Twilio.
 * Each step undone when a later one fails; Twilio's refusal is recorded on the call (502).
 */
const place = async ({ call, number, callee, apiBase }: Placement): Promise<CallRecord> => {
  const { org_id: orgId } = call;
  const slot = await holdOutboundCallSlot(orgId, config.outboundCallsAtOnce, slotDurationMs);
  if (!slot) {
    throw new RateLimitedError(
      `The organization has ${config.outboundCallsAtOnce} outbound calls under way, its most at once; retry once one ends.`,
      5,
    );
  }
  let conversationId: string | undefined;
  try {
    ({ conversationId } = await startConversationAwaitingAnswer(orgId, callee, {
      serviceId: call.service_id as string,
      versionSetName: call.version_set_name ?? 'release',
      note: callNote(call),
    }));
    const placed = await createTwilioCall(await twilioCredentialsOf(number), {
      To: call.to,
      From: call.from,
      Url: callbackUrl(apiBase, orgId, 'voice', call.id),
      Method: 'POST',
      StatusCallback: callbackUrl(apiBase, orgId, 'status', call.id),
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      MachineDetection: 'DetectMessageEnd',
      AsyncAmd: 'true',
      AsyncAmdStatusCallback: callbackUrl(apiBase, orgId, 'amd', call.id),
      AsyncAmdStatusCallbackMethod: 'POST',
      Timeout: String(ringSeconds),
      TimeLimit: String(maxCallSeconds),
    });
    await markCallPlaced(call, { callSid: placed.sid, conversationId, slot });
    return { ...call, call_sid: placed.sid, conversation_id: conversationId, placed_conversation_id: conversationId };
  } catch (error) {
    if (conversationId) await endConversationOfCall(orgId, conversationId);
    await releaseOutboundCallSlot(orgId, slot);
    if (!(error instanceof TwilioApiError)) {
      await removePlacingCall(call);
      throw error;
    }
    await markCallFailed(call, { message: error.message, code: error.code ?? null }, nowIso());
    const code = error.code === undefined ? '' : ` (Twilio error ${error.code})`;
    throw new BadGatewayError(`Twilio did not place the call: ${error.message}${code}`, { cause: error });
  }
};

/**
 * Places an outbound call (201 `{call_sid, status: "queued", conversation_id}`). `apiBase` is the
 * API's address as the request reached it: Twilio's callbacks come back there. 422 for a
 * `phone_from` that is not the organization's, 404 for a service the caller may not see, 400 while
 * the callee has an unfinished conversation of the service, 429 over the organization's rate or
 * its calls at once, 502 when Twilio refuses the call.
 */
export const createOutboundCall = async (
  orgId: string,
  caller: Caller,
  body: CreateOutboundCallRequest,
  apiBase: string,
): Promise<ReturnType<typeof answerOf>> => {
  requirePermission(caller, 'Call:PlaceCall', { direction: 'outbound', service_id: body.service_id });
  const organization = await requireOrganization(orgId);
  const number = await findPhoneNumber(orgId, body.phone_from);
  if (!number) throw notTheOrganizationsNumber();
  const serviceId = body.service_id ?? number.service_id;
  requirePermission(
    caller,
    'Call:PlaceCall',
    callAttributes({ direction: 'outbound', phone_number_id: number.id, service_id: serviceId, user_id: null }),
  );
  // A service the caller may not see is answered as a missing one.
  const service = await getService(orgId, serviceId);
  if (!service || !hasPermission(caller, 'Service:GetService', serviceAttributes(service))) {
    throw new NotFoundError(`Service ${serviceId} not found.`);
  }

  const key = body.idempotency_key;
  const answered = key === undefined ? undefined : await settledCallOfKey(orgId, key);
  if (answered?.placement === 'placed') return answerOf(answered);
  if (answered?.placement === 'placing') {
    throw new ConflictError(`The call of idempotency key ${key} is still being placed; retry.`, {
      retryAfterSeconds: 2,
    });
  }

  await takeToken(
    { orgId, subject: 'organization', name: 'create-outbound-call' },
    { burst: config.outboundCallsPerMinute, perMinute: config.outboundCallsPerMinute },
  );
  // The platform dialled the number: who answers holds it, as an attested caller's number is theirs.
  const calleeId = await callerUserId(organization, body.phone_to, '', true);
  const callee = await refreshCaller({ homeOrgId: orgId, orgId, userId: calleeId, tokenType: 'Bearer' });
  if (!callee) throw new ConflictError(`The user of ${body.phone_to} may not hold conversations.`);

  const createdAt = nowIso();
  let call: CallRecord;
  if (answered?.placement === 'failed') {
    // The key's earlier attempt failed: this request asks Twilio again, under the same record.
    if (!(await retryFailedCall(answered, createdAt))) {
      throw new ConflictError(`The call of idempotency key ${key} is being placed again; retry.`, {
        retryAfterSeconds: 2,
      });
    }
    call = {
      ...answered,
      placement: 'placing',
      attempt: (answered.attempt ?? 1) + 1,
      status: 'queued',
      status_rank: statusRank.queued,
      error: null,
      ended_at: null,
      created_at: createdAt,
    };
  } else {
    call = {
      id: newId(),
      org_id: orgId,
      call_sid: null,
      direction: 'outbound',
      status: 'queued',
      status_rank: statusRank.queued,
      from: number.phone_number,
      to: body.phone_to,
      phone_number_id: number.id,
      service_id: serviceId,
      version_set_name: body.version_set_name,
      conversation_id: null,
      user_id: calleeId,
      reason: body.reason,
      goal: body.goal ?? null,
      metadata: body.metadata ?? {},
      voicemail_message: body.voicemail_message ?? null,
      placement: 'placing',
      attempt: 1,
      idempotency_key: key ?? newId(),
      ...newCallOutcome,
      created_at: createdAt,
      creator: creatorOf(caller),
      ...retentionOf(retentionDaysOf(organization), createdAt),
    };
    try {
      await insertPlacingCall(call);
    } catch (error) {
      // Another request with the key stored its call first: this one answers what that one does.
      if (!(error instanceof ConflictError) || key === undefined) throw error;
      const other = await settledCallOfKey(orgId, key);
      if (other?.placement === 'placed') return answerOf(other);
      throw error;
    }
  }
  return answerOf(await place({ call, number, callee, apiBase }));
};
