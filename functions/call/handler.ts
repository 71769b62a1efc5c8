import { getCallDetails, getCallRecording, getCallTimeline, listCalls } from '#shared/call/calls';
import { callOperations } from '#shared/call/operations';
import { createOutboundCall } from '#shared/call/outbound-calls';
import { continueAfterStream, transferCall, transferWhisperTwiml } from '#shared/call/transfers';
import { answerOutboundCall, receiveAnsweringMachineVerdict, receiveCallStatus } from '#shared/call/twilio-callbacks';
import { httpHandler, implementGroup, type RequestContext } from '#shared/http/http-handler';
import { config } from '#shared/kernel/config';
import { addressedUrl, baseOf, voiceSessionBase } from '#shared/phone-number/twilio-signature';

/** The URL as Twilio addressed it (it signs that one), or as the client reached the API (Twilio calls back there). */
const addressed = (context: RequestContext, forwardedHost: string | undefined): string =>
  addressedUrl(context.url, forwardedHost, config.publicApiBaseUrl);

/**
 * A request of Twilio's as it signed it: the URL with its query (the call's id, which this
 * platform wrote into the callback URL itself, so it is re-encoded exactly), and the raw form.
 */
const signed = (
  context: RequestContext,
  headers: { 'x-twilio-signature'?: string; 'x-forwarded-host'?: string },
  query: { call_id?: string },
) => ({
  url: `${addressed(context, headers['x-forwarded-host'])}${query.call_id ? `?call_id=${query.call_id}` : ''}`,
  signature: headers['x-twilio-signature'],
  form: new URLSearchParams(context.rawBody.toString('utf8')),
});

export const handler = httpHandler(
  implementGroup('call', [callOperations], {
    'create-outbound-call': ({ path, headers, body, caller, context }) =>
      createOutboundCall(path.organization, caller, body, baseOf(addressed(context, headers['x-forwarded-host']))),
    'list-calls': ({ path, query, caller }) => listCalls(path.organization, caller, query),
    'get-call': ({ path, caller }) => getCallDetails(path.organization, caller, path.call_sid),
    'get-call-timeline': ({ path, caller }) => getCallTimeline(path.organization, caller, path.call_sid),
    'get-call-recording': ({ path, caller }) => getCallRecording(path.organization, caller, path.call_sid),
    'transfer-call': ({ path, headers, body, caller, context }) =>
      transferCall(
        path.organization,
        caller,
        path.call_sid,
        body,
        baseOf(addressed(context, headers['x-forwarded-host'])),
      ),
    'twilio-call-answer': ({ path, query, headers, body, context }) => {
      const request = signed(context, headers, query);
      return answerOutboundCall(
        path.organization,
        query.call_id,
        body,
        request,
        voiceSessionBase(request.url, config.voiceSessionUrl),
      );
    },
    'twilio-call-status': ({ path, query, headers, body, context }) =>
      receiveCallStatus(path.organization, query.call_id, body, signed(context, headers, query)),
    'twilio-call-amd': ({ path, query, headers, body, context }) =>
      receiveAnsweringMachineVerdict(path.organization, query.call_id, body, signed(context, headers, query)),
    'twilio-transfer-whisper': ({ path, query, headers, body, context }) =>
      transferWhisperTwiml(path.organization, query.call_id, body, signed(context, headers, query)),
    'twilio-call-continue': ({ path, query, headers, body, context }) =>
      continueAfterStream(
        path.organization,
        query.call_id,
        body,
        signed(context, headers, query),
        baseOf(addressed(context, headers['x-forwarded-host'])),
      ),
  }),
);
