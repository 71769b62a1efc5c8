import { z } from 'zod';
import { eventId } from '../../events/stream-events';
import { callDirections, callReference, callStatuses } from '../call/schemas';
import {
  commonHeaders,
  cursorHandle,
  e164Number,
  mapKeyName,
  objectId,
  organizationPath,
  queryNumber,
} from '../kernel/schemas';
import { languageCode, timeZone } from '../organization/user-preferences';
import { appHostHeader } from './organization-host';

export const htmlContentType = 'text/html; charset=utf-8';

export const htmlPage = z.string().describe('An HTML page.');

/** The browser's cookies carry the session and the CSRF nonce. */
export const appHeaders = commonHeaders.extend({
  cookie: z.string().max(8192).optional().describe('The session and CSRF cookies the app set.'),
  [appHostHeader]: z
    .string()
    .max(253)
    .optional()
    .describe(
      "Set by the CDN: the organization's host the browser asked for (honoured only when it is this organization's).",
    ),
});

export const appPath = organizationPath;
export const appConversationPath = organizationPath.extend({
  conversation_id: objectId.describe('The identifier of the conversation.'),
});
export const appCallPath = organizationPath.extend({ call_sid: callReference });
export const appMessagePath = appConversationPath.extend({
  message_id: objectId.describe('The identifier of the message.'),
});

/** Every form carries the token signed over the browser's CSRF nonce. */
export const csrfField = z.string().max(2048).optional().describe('The CSRF token the page embedded in the form.');

export const csrfForm = z.object({ csrf_token: csrfField });

/** The console's "make a regression test" form: one metric to judge the test by. */
export const regressionTestForm = z.object({
  csrf_token: csrfField,
  metric_id: objectId.describe('The metric the unit test judges the simulated conversations by.'),
});

export const signInForm = z.object({
  csrf_token: csrfField,
  // What the browser's `type=email` field accepts (HTML's rule), so `admin@localhost`, the address
  // `npm start` gives the root organization's administrator, signs in as the form lets it.
  email: z.email({ pattern: z.regexes.html5Email }).max(320).describe('The e-mail address of the user signing in.'),
});

export const completeSignInQuery = z.object({
  token: z.string().min(1).max(4096).describe('The token of the e-mailed sign-in link.'),
});

export const startConversationForm = z.object({
  csrf_token: csrfField,
  service_id: objectId.describe('The service to talk to.'),
});

/** A checkbox asking for the agent's reply spoken (MP3 pieces) as well as written. */
const speakReplies = z.enum(['on']).optional().describe('`on`: the reply comes as MP3 pieces with their transcripts.');

export const sendMessageForm = z.object({
  csrf_token: csrfField,
  message: z.string().trim().min(1).max(10_000).describe('What the user says.'),
  speak_replies: speakReplies,
});

export const voiceMessageQuery = z.object({ speak_replies: speakReplies });

/** A request the page script sends without a form (a recording, a resumed stream) carries its CSRF token in a header. */
export const scriptHeaders = appHeaders.extend({
  'x-csrf-token': z.string().max(2048).optional().describe('The CSRF token the page embedded.'),
});

export const voiceMessageHeaders = scriptHeaders.extend({
  'content-type': z
    .string()
    .max(200)
    .optional()
    .describe('The recording: audio/wav (the page sends 16 kHz mono PCM16).'),
});

/** Where a chat whose stream broke resumes: after the last event it handled. */
export const conversationEventsQuery = z.object({
  after: eventId.describe('The last event the page handled: the stream starts after it.'),
});

/**
 * Empty fields leave a preference as it is, or filter nothing (browsers send every field of a
 * form): declared as '' or the value, so the served schema says an empty field is accepted.
 */
const optionalField = <T extends z.ZodType>(schema: T) =>
  z
    .union([z.literal(''), schema])
    .transform((value) => (value === '' ? undefined : (value as z.output<T>)))
    .optional();

export const preferencesForm = z.object({
  csrf_token: csrfField,
  preferred_language: optionalField(languageCode).describe('ISO 639-3 code; empty leaves it unchanged.'),
  timezone: optionalField(timeZone).describe('IANA time zone; empty leaves it unchanged.'),
  enable_response_recommendation: z
    .enum(['on', 'off'])
    .optional()
    .describe('A checkbox: `on` when checked, absent otherwise.'),
});

/** The scripts the console's charts load: the charting library, then what draws with it. */
export const appAssets = ['chart.umd.min.js', 'charts.js'] as const;
export const assetPath = organizationPath.extend({
  asset: z.enum(appAssets).describe('Which script.'),
});

export const brandingImagePath = organizationPath.extend({
  image: z.enum(['logo', 'square_logo', 'signup_page_headshot']).describe('Which PNG image of the organization.'),
});

export const serviceDiagramPath = organizationPath.extend({
  service_id: objectId.describe('The identifier of the service.'),
});

export const webhookDeliveriesPath = organizationPath.extend({
  webhook_destination_id: objectId.describe('The identifier of the webhook destination.'),
});

/** What the operator view says after a form it posted was refused (a redirect back to it). */
export const operatorNotices = ['taken', 'not-holder', 'busy', 'finished'] as const;
export const operatorViewQuery = z.object({
  notice: z
    .enum(operatorNotices)
    .optional()
    .describe('Why the last action did not happen: taken by another operator, not held by you, busy, or finished.'),
});

export const operatorMessageForm = z.object({
  csrf_token: csrfField,
  message: z.string().trim().min(1).max(10_000).describe('What the operator tells the user.'),
});

export const operatorGuidanceForm = z.object({
  csrf_token: csrfField,
  guidance: z.string().trim().min(1).max(2000).describe('What the agent is told; the user does not see it.'),
});

export const handBackForm = z.object({
  csrf_token: csrfField,
  outcome: z.enum(['resolved', 'unresolved', 'needs-follow-up']).describe('How the operator left things.'),
  note: z.string().trim().max(2000).default('').describe('What the operator concluded, for the agent.'),
});

/** A day of the period a lake page covers (the browser's date field sends `YYYY-MM-DD`). */
const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day, YYYY-MM-DD')
  .refine((day) => !Number.isNaN(Date.parse(`${day}T00:00:00Z`)), 'must be a day of the calendar');

/** What the dashboard's charts cover; every field may be left empty (the last 30 days, every version set and service). */
export const dashboardQuery = z.object({
  from: optionalField(isoDay).describe('The first day (UTC) of the period; 30 days before `to` when empty.'),
  to: optionalField(isoDay).describe('The last day (UTC) of the period; today when empty.'),
  version_set: optionalField(mapKeyName).describe('Only conversations of this version set.'),
  service_id: optionalField(objectId).describe('Only conversations of this service.'),
  simulated: z.enum(['on']).optional().describe('A checkbox: `on` counts simulated conversations too.'),
});

/** The conversation search's filters (empty fields filter nothing) and its page, as the API pages. */
export const conversationSearchQuery = dashboardQuery.omit({ simulated: true }).extend({
  status: optionalField(z.enum(['finished', 'open'])).describe('Only finished or only open conversations.'),
  escalated: optionalField(z.enum(['yes', 'no'])).describe('Only conversations escalated to an operator, or never.'),
  source: optionalField(z.enum(['real', 'simulated', 'all'])).describe(
    'Real conversations (the default), simulated ones, or both.',
  ),
  min_cost_usd: optionalField(queryNumber(z.number().nonnegative().max(1_000_000))).describe(
    'Only conversations that cost more than this (US dollars).',
  ),
  min_first_token_ms: optionalField(queryNumber(z.number().int().nonnegative().max(3_600_000))).describe(
    'Only conversations with a turn whose first token came later than this (ms from its request).',
  ),
  text: optionalField(z.string().trim().min(1).max(200)).describe('Words said in the conversation (any message).'),
  limit: optionalField(queryNumber(z.number().int().min(1).max(100))).describe('Conversations per page (25).'),
  continuation_token: optionalField(queryNumber(cursorHandle)).describe(
    'The next page: the continuation_token of the page before it (the same filters).',
  ),
});

/** The calls page's filters (empty fields filter nothing) and its page, as list-calls pages. */
export const callSearchQuery = z.object({
  direction: optionalField(z.enum(callDirections)).describe('Only inbound or only outbound calls.'),
  status: optionalField(z.enum(callStatuses)).describe('Only calls in this status.'),
  phone_number: optionalField(e164Number).describe('Only calls from or to this number (E.164).'),
  from: optionalField(isoDay).describe('Only calls made from this day on (UTC).'),
  to: optionalField(isoDay).describe('Only calls made up to this day (UTC).'),
  limit: optionalField(queryNumber(z.number().int().min(1).max(100))).describe('Calls per page (25).'),
  continuation_token: optionalField(queryNumber(cursorHandle)).describe(
    'The next page: the continuation_token of the page before it (the same filters).',
  ),
});
export type CallSearchQuery = z.infer<typeof callSearchQuery>;
