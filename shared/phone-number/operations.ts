import { z } from 'zod';
import { defineOperation } from '../kernel/operation';
import { commonHeaders, continuationToken, objectId, organizationPath, queryNumber } from '../kernel/schemas';
import { createPhoneNumberRequest, listPhoneNumbersResponse, phoneNumberView, twilioVoiceWebhookForm } from './schemas';

/**
 * Phone numbers (platform extensions, not in the reference; group `phone-number`): an
 * organization's numbers, each answered by one of its services, and the voice webhook Twilio
 * calls when one rings. They need the PhoneNumber permissions; the webhook is Twilio's, signed
 * with the number's auth token rather than authenticated.
 */

const headers = commonHeaders;
const phoneNumber = {
  group: 'phone-number',
  tag: 'Phone Number',
  platformExtension: true,
} as const;
const numberPath = organizationPath.extend({
  phone_number_id: objectId.describe('The identifier of the phone number.'),
});

export const createPhoneNumberOperation = defineOperation({
  ...phoneNumber,
  operationId: 'create-phone-number',
  method: 'POST',
  path: '/v1/{organization}/phone_number/',
  summary: "Register a phone number whose calls a service answers (the provider's auth token is write-only)",
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers, body: createPhoneNumberRequest },
  response: { status: 201, body: z.object({ id: objectId }) },
});

export const listPhoneNumbersOperation = defineOperation({
  ...phoneNumber,
  operationId: 'list-phone-numbers',
  method: 'GET',
  path: '/v1/{organization}/phone_number/',
  summary: "List the organization's phone numbers, oldest first",
  auth: 'required',
  rateLimitPerMinute: 60,
  request: {
    path: organizationPath,
    headers,
    query: z.object({
      limit: queryNumber(z.number().int().min(1).max(100))
        .prefault(50)
        .describe('The maximum number of phone numbers to retrieve.'),
      continuation_token: continuationToken,
    }),
  },
  response: { status: 200, body: listPhoneNumbersResponse },
});

export const getPhoneNumberOperation = defineOperation({
  ...phoneNumber,
  operationId: 'get-phone-number',
  method: 'GET',
  path: '/v1/{organization}/phone_number/{phone_number_id}',
  summary: 'Get a phone number',
  auth: 'required',
  rateLimitPerMinute: 60,
  request: { path: numberPath, headers },
  response: { status: 200, body: phoneNumberView },
});

export const deletePhoneNumberOperation = defineOperation({
  ...phoneNumber,
  operationId: 'delete-phone-number',
  method: 'DELETE',
  path: '/v1/{organization}/phone_number/{phone_number_id}',
  summary: 'Delete a phone number and its auth token; its next call is refused',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: numberPath, headers },
  response: { status: 204 },
});

export const twilioVoiceWebhookOperation = defineOperation({
  ...phoneNumber,
  operationId: 'twilio-voice-webhook',
  method: 'POST',
  path: '/v1/{organization}/phone_number/twilio/voice',
  summary:
    "Twilio's voice URL for the organization's numbers: a signed call is answered with TwiML that streams it to the voice session",
  // Twilio cannot authenticate: X-Twilio-Signature (HMAC-SHA1 keyed by the number's auth token) proves the request is Twilio's.
  auth: 'none',
  extraErrors: { 403: 'The request does not carry a valid Twilio signature for a number of the organization.' },
  request: {
    path: organizationPath,
    headers: headers.extend({
      'x-twilio-signature': z.string().max(200).optional().describe("Twilio's signature of the request."),
      'x-forwarded-host': z.string().max(500).optional(),
    }),
    bodyType: 'form',
    body: twilioVoiceWebhookForm,
  },
  response: { status: 200, body: z.string().describe('TwiML'), contentType: 'text/xml' },
});

/**
 * The call's media stream: a WebSocket (Twilio's Media Streams protocol) that the TwiML of the
 * voice webhook points Twilio at. Served by the session container and `npm start`, not through
 * API Gateway: in the OpenAPI document only (`shared/api/socket-operations.ts`).
 */
export const twilioMediaStreamOperation = defineOperation({
  ...phoneNumber,
  operationId: 'twilio-media-stream',
  method: 'GET',
  path: '/v1/{organization}/phone_number/{phone_number_id}/twilio/media-stream/{call_token}',
  summary:
    "A call's media stream (WebSocket, Twilio's Media Streams protocol, μ-law 8 kHz; signed by Twilio; docs/voice.md)",
  auth: 'none',
  extraErrors: {
    403: 'The upgrade does not carry a valid Twilio signature for the number, or the call token was used or is not the call’s.',
  },
  request: {
    path: numberPath.extend({
      call_token: z.string().describe("The call's single-use token, from the voice webhook's TwiML."),
    }),
    headers: headers.extend({
      'x-twilio-signature': z.string().max(200).optional().describe("Twilio's signature of the socket's URL."),
    }),
  },
  response: { status: 101 },
});

export const phoneNumberOperations = [
  createPhoneNumberOperation,
  listPhoneNumbersOperation,
  getPhoneNumberOperation,
  deletePhoneNumberOperation,
  twilioVoiceWebhookOperation,
] as const;
