import { z } from 'zod';
import { creatorInfo, e164Number, objectId, pagedResponse, timestamp } from '../kernel/schemas';

export { e164Number };

/** Twilio account SIDs are `AC` and 32 hexadecimal digits. */
export const twilioAccountSid = z
  .string()
  .regex(/^AC[0-9a-fA-F]{32}$/, 'must be a Twilio account SID (AC and 32 hexadecimal digits)');

export const createPhoneNumberRequest = z.object({
  phone_number: e164Number,
  service_id: objectId.describe('The service that answers calls to this number.'),
  provider: z.literal('twilio').describe('The telephony provider that owns the number.'),
  twilio_account_sid: twilioAccountSid.describe('The SID of the Twilio account that owns the number.'),
  twilio_auth_token: z
    .string()
    .regex(/^[A-Za-z0-9]{16,128}$/, 'must be a Twilio auth token (letters and digits)')
    .describe("The account's auth token, which signs Twilio's requests. Write-only: never returned."),
  recording: z
    .boolean()
    .default(true)
    .describe(
      "A platform extension: whether the number's calls (inbound and outbound) are recorded, both channels as WAV in the organization's storage. On unless turned off.",
    ),
  recording_announcement: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .optional()
    .describe(
      'A platform extension: what a recorded call hears first, before the agent speaks ("This call is recorded."); none by default.',
    ),
});
export type CreatePhoneNumberRequest = z.infer<typeof createPhoneNumberRequest>;

/** What clients see of a number: everything but its auth token. */
export const phoneNumberView = z.object({
  id: objectId,
  phone_number: e164Number,
  service_id: objectId,
  provider: z.literal('twilio'),
  twilio_account_sid: z.string(),
  recording: z.boolean().describe("A platform extension: whether the number's calls are recorded."),
  recording_announcement: z
    .string()
    .nullable()
    .describe('A platform extension: what a recorded call hears first (null: nothing).'),
  creator: creatorInfo,
  created_at: timestamp,
});
export type PhoneNumberView = z.infer<typeof phoneNumberView>;

export const listPhoneNumbersResponse = pagedResponse({ phone_numbers: z.array(phoneNumberView) });

/** The most numbers an organization may have, so listing them stays one bounded read. */
export const maxPhoneNumbersPerOrganization = 100;

/**
 * The fields of Twilio's voice webhook this platform reads (Twilio sends more, and adds fields
 * over time: all of them are signed, so the signature is computed over the raw form).
 */
export const twilioVoiceWebhookForm = z
  .object({
    CallSid: z.string().regex(/^CA[0-9a-fA-F]{32}$/, 'must be a Twilio call SID'),
    AccountSid: twilioAccountSid,
    From: z.string().max(64),
    To: z.string().max(64),
    /** STIR/SHAKEN's verdict on `From`, where the carrier gave one (`TN-Validation-Passed-A`: attested). */
    StirVerstat: z.string().max(64).optional(),
  })
  .catchall(z.string());
