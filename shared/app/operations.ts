import { z } from 'zod';
import { conversationEvent, createConversationEvent, interactEvent } from '../../events/stream-events';
import { defineOperation, mediaMaxBodyBytes, type Operation } from '../kernel/operation';
import {
  appCallPath,
  appConversationPath,
  appHeaders,
  appMessagePath,
  appPath,
  assetPath,
  brandingImagePath,
  callSearchQuery,
  completeSignInQuery,
  conversationEventsQuery,
  conversationSearchQuery,
  csrfForm,
  dashboardQuery,
  handBackForm,
  htmlContentType,
  htmlPage,
  operatorGuidanceForm,
  operatorMessageForm,
  operatorViewQuery,
  preferencesForm,
  regressionTestForm,
  scriptHeaders,
  sendMessageForm,
  serviceDiagramPath,
  signInForm,
  startConversationForm,
  voiceMessageHeaders,
  voiceMessageQuery,
  webhookDeliveriesPath,
} from './schemas';

/**
 * The organization's web app: server-rendered pages at `/app/{org_id}/` (and at
 * `{org_id}.{frontend_domain}/`, which the gateway or CDN maps here). Every operation streams
 * (the chat's replies do), so the group is a streaming Lambda; pages are one chunk of HTML.
 * The session is a cookie, so operations authenticate it themselves (`checksCredentials`).
 */
/** A page's or form's request: the app's headers (the session cookie) unless it declares its own; a page's path is the app's unless it says. */
type AppRequest<T extends Partial<Pick<Operation, 'request'>>> = T['request'] extends object
  ? T['request'] extends { headers: z.ZodObject }
    ? T['request']
    : T['request'] & { headers: typeof appHeaders }
  : { path: typeof appPath; headers: typeof appHeaders };

const pageIn =
  <const G extends 'app' | 'app-analytics'>(group: G) =>
  <const T extends Pick<Operation, 'operationId' | 'summary' | 'path'> & Partial<Omit<Operation, 'group'>>>({
    request,
    ...fields
  }: T) =>
    defineOperation({
      method: 'GET',
      group,
      tag: 'App',
      auth: 'none',
      checksCredentials: true,
      streaming: true,
      // Links to a page may carry parameters of their own (a campaign's, a cache buster): a page
      // that declares none ignores them.
      ignoresUndeclaredQuery: true as boolean,
      request: { path: appPath, headers: appHeaders, ...request } as AppRequest<T>,
      response: { status: 200, body: htmlPage, contentType: htmlContentType },
      ...fields,
    });

export const page = pageIn('app');
/** A page of the console over the organization's lake, on the function that carries the SQL query's engine. */
const lakePage = pageIn('app-analytics');

/** A form posted by the browser; answered by a redirect (303, Post/Redirect/Get). */
export const formPost = <
  const T extends Pick<Operation, 'operationId' | 'summary' | 'path' | 'request'> & Partial<Operation>,
>({
  request,
  ...fields
}: T) =>
  defineOperation({
    method: 'POST',
    group: 'app',
    tag: 'App',
    auth: 'none',
    checksCredentials: true,
    streaming: true,
    ignoresUndeclaredQuery: true,
    response: { status: 303, body: htmlPage, contentType: htmlContentType },
    extraErrors: { 403: 'The form has no valid CSRF token for this browser, or the user is not verified.' },
    request: { headers: appHeaders, ...request } as AppRequest<T>,
    ...fields,
  });

export const getAppHomeOperation = page({
  operationId: 'get-app-home',
  summary: "The app's home: the sign-in page, or once signed in, the services to talk to and past conversations",
  path: '/app/{organization}/',
});

export const requestAppSignInLinkOperation = defineOperation({
  operationId: 'request-app-sign-in-link',
  method: 'POST',
  path: '/app/{organization}/sign-in',
  group: 'app',
  tag: 'App',
  summary: 'E-mail a sign-in link that opens the app',
  auth: 'none',
  checksCredentials: true,
  streaming: true,
  ignoresUndeclaredQuery: true,
  // The API's e-mail sign-in limit, in the same bucket (per address).
  rateLimitPerMinute: 5,
  request: { path: appPath, headers: appHeaders, body: signInForm, bodyType: 'form' },
  response: { status: 200, body: htmlPage, contentType: htmlContentType },
});

export const completeAppSignInOperation = page({
  operationId: 'complete-app-sign-in',
  summary: 'Redeem an e-mailed sign-in link: sets the session cookie and redirects home',
  path: '/app/{organization}/sign-in/complete',
  // The link the platform e-mails: it declares its one parameter, and refuses others.
  ignoresUndeclaredQuery: false,
  request: { path: appPath, query: completeSignInQuery },
  response: { status: 303, body: htmlPage, contentType: htmlContentType },
});

export const signOutOfAppOperation = formPost({
  operationId: 'sign-out-of-app',
  summary: 'Sign out: clears the session cookie',
  path: '/app/{organization}/sign-out',
  request: { path: appPath, body: csrfForm, bodyType: 'form' },
});

export const getAppOnboardingOperation = page({
  operationId: 'get-app-onboarding',
  summary: "The organization's onboarding pages (markdown, rendered safely)",
  path: '/app/{organization}/onboarding',
});

export const startAppConversationOperation = defineOperation({
  operationId: 'start-app-conversation',
  method: 'POST',
  path: '/app/{organization}/conversations',
  group: 'app',
  tag: 'App',
  summary: "Start a conversation with a service; the agent's opening reply streams as NDJSON events",
  auth: 'none',
  checksCredentials: true,
  streaming: true,
  ignoresUndeclaredQuery: true,
  // create-conversation's limit, in its bucket.
  rateLimitPerMinute: 5,
  extraErrors: { 403: 'The form has no valid CSRF token for this browser, or the user is not verified.' },
  request: { path: appPath, headers: appHeaders, body: startConversationForm, bodyType: 'form' },
  response: { status: 200, body: createConversationEvent, contentType: 'application/x-ndjson' },
});

export const getAppConversationOperation = page({
  operationId: 'get-app-conversation',
  summary: 'A conversation: its messages, and while it is open, the message box',
  path: '/app/{organization}/conversations/{conversation_id}',
  request: { path: appConversationPath },
});

export const sendAppMessageOperation = defineOperation({
  operationId: 'send-app-message',
  method: 'POST',
  path: '/app/{organization}/conversations/{conversation_id}/messages',
  group: 'app',
  tag: 'App',
  summary: "Send a message; the agent's reply streams as NDJSON events",
  auth: 'none',
  checksCredentials: true,
  streaming: true,
  ignoresUndeclaredQuery: true,
  // interact-with-conversation's limit, in its bucket.
  rateLimitPerMinute: 15,
  extraErrors: { 403: 'The form has no valid CSRF token for this browser, or the user is not verified.' },
  request: { path: appConversationPath, headers: appHeaders, body: sendMessageForm, bodyType: 'form' },
  response: { status: 200, body: interactEvent, contentType: 'application/x-ndjson' },
});

export const sendAppVoiceMessageOperation = defineOperation({
  operationId: 'send-app-voice-message',
  method: 'POST',
  path: '/app/{organization}/conversations/{conversation_id}/voice-messages',
  group: 'app',
  tag: 'App',
  summary: "Send a recorded message (audio/wav); the transcript and the agent's reply stream as NDJSON events",
  auth: 'none',
  checksCredentials: true,
  streaming: true,
  // interact-with-conversation's limit, in its bucket.
  rateLimitPerMinute: 15,
  extraErrors: {
    403: 'The request has no valid CSRF token for this browser, or the user is not verified.',
    415: 'The body is not audio the platform reads (integer PCM WAV or MP3).',
  },
  request: {
    path: appConversationPath,
    query: voiceMessageQuery,
    headers: voiceMessageHeaders,
    bodyType: 'binary',
    maxBodyBytes: mediaMaxBodyBytes,
  },
  response: { status: 200, body: interactEvent, contentType: 'application/x-ndjson' },
});

/** The chat's talk mode: a token for the live voice session's socket, which takes it in its subprotocol. */
export const createAppTalkTokenOperation = defineOperation({
  operationId: 'create-app-talk-token',
  method: 'POST',
  path: '/app/{organization}/conversations/{conversation_id}/talk-token',
  group: 'app',
  tag: 'App',
  summary: "A token for the conversation's live voice session (the page's talk mode opens the socket with it)",
  auth: 'none',
  checksCredentials: true,
  // One JSON document, streamed as every answer of the group is (a Lambda streams all or none).
  streaming: true,
  // A voice session stands in for interact-with-conversation: its limit.
  rateLimitPerMinute: 15,
  extraErrors: { 403: 'The request has no valid CSRF token for this browser, or the user is not verified.' },
  request: { path: appConversationPath, headers: scriptHeaders },
  response: {
    status: 200,
    body: z.object({
      access_token: z
        .string()
        .describe('An access token of the signed-in user, for Sec-WebSocket-Protocol: auth, <token>.'),
      expires_in: z.number().int(),
    }),
    contentType: 'application/json',
  },
});

/** The chat's way back after a dropped connection: `get-conversation-events` behind the session cookie. */
export const getAppConversationEventsOperation = defineOperation({
  operationId: 'get-app-conversation-events',
  method: 'GET',
  path: '/app/{organization}/conversations/{conversation_id}/events',
  group: 'app',
  tag: 'App',
  summary:
    "Resume a reply whose stream broke: the conversation's events after `after` as NDJSON, then the running interaction's until it ends",
  auth: 'none',
  checksCredentials: true,
  streaming: true,
  // get-conversation-events' limit, in its bucket.
  rateLimitPerMinute: 60,
  extraErrors: { 403: 'The request has no valid CSRF token for this browser, or the user is not verified.' },
  request: { path: appConversationPath, query: conversationEventsQuery, headers: scriptHeaders },
  response: { status: 200, body: conversationEvent, contentType: 'application/x-ndjson' },
});

export const finishAppConversationOperation = formPost({
  operationId: 'finish-app-conversation',
  summary: 'Finish a conversation',
  path: '/app/{organization}/conversations/{conversation_id}/finish',
  request: { path: appConversationPath, body: csrfForm, bodyType: 'form' },
});

export const getAppPreferencesOperation = page({
  operationId: 'get-app-preferences',
  summary: "The signed-in user's preferences",
  path: '/app/{organization}/preferences',
});

export const updateAppPreferencesOperation = formPost({
  operationId: 'update-app-preferences',
  summary: "Change the signed-in user's preferences",
  path: '/app/{organization}/preferences',
  request: { path: appPath, body: preferencesForm, bodyType: 'form' },
});

export const getAppConsoleOperation = page({
  operationId: 'get-app-console',
  summary:
    "The console's overview (roles whose frontend_view is admin): the way to the dashboard and the conversation search, the operator queue's first entries, recent conversations",
  path: '/app/{organization}/console',
});

export const getAppConsoleConversationOperation = page({
  operationId: 'get-app-console-conversation',
  summary:
    'A conversation, whole (console): each turn with its stages to scale, tokens and cost, state, tool calls and dynamic behaviors; escalations and operators; metric results',
  path: '/app/{organization}/console/conversations/{conversation_id}',
  request: { path: appConversationPath },
});

export const getAppMessageAudioOperation = defineOperation({
  operationId: 'get-app-message-audio',
  method: 'GET',
  path: '/app/{organization}/console/conversations/{conversation_id}/messages/{message_id}/audio',
  group: 'app',
  tag: 'App',
  summary: "A voice message's audio, for the console's player (as `get-message-source` allows)",
  auth: 'none',
  checksCredentials: true,
  streaming: true,
  ignoresUndeclaredQuery: true,
  request: { path: appMessagePath, headers: appHeaders },
  response: { status: 200, body: z.instanceof(Buffer), contentType: 'audio/wav' },
});

export const getAppCallsOperation = page({
  operationId: 'get-app-calls',
  summary: "The organization's calls, newest first, filtered by direction, status, number and day (console)",
  path: '/app/{organization}/console/calls',
  request: { path: appPath, query: callSearchQuery },
});

export const getAppCallOperation = page({
  operationId: 'get-app-call',
  summary: 'A call (console): who, when, how it went, its timeline drawn, and both channels of its recording to play',
  path: '/app/{organization}/console/calls/{call_sid}',
  request: { path: appCallPath },
});

export const getAppOperatorQueueOperation = page({
  operationId: 'get-app-operator-queue',
  summary: 'The conversations awaiting an operator, then those operators hold (console)',
  path: '/app/{organization}/console/operator',
});

export const getAppServicesOperation = page({
  operationId: 'get-app-services',
  summary: 'The services, each opening its state machine diagram (console)',
  path: '/app/{organization}/console/services',
});

export const getAppWebhooksOperation = page({
  operationId: 'get-app-webhooks',
  summary: 'The webhook destinations, each opening its recent deliveries (console)',
  path: '/app/{organization}/console/webhooks',
});

export const getAppSimulationsOperation = page({
  operationId: 'get-app-simulations',
  summary: "The most recent simulation runs with their pass rates, the run's and each unit test's (console)",
  path: '/app/{organization}/console/simulations',
});

export const createAppRegressionTestOperation = formPost({
  operationId: 'create-app-regression-test',
  summary: 'Make a simulation unit test of a finished conversation, judged by a metric (console)',
  path: '/app/{organization}/console/conversations/{conversation_id}/regression_test',
  request: { path: appConversationPath, body: regressionTestForm, bodyType: 'form' },
});

export const getAppServiceDiagramOperation = page({
  operationId: 'get-app-service-diagram',
  summary:
    "A service's state machine as a diagram, shaded by how often recent conversations visited each state, with simulation runs' coverage",
  path: '/app/{organization}/console/services/{service_id}',
  request: { path: serviceDiagramPath },
});

export const getAppWebhookDeliveriesOperation = page({
  operationId: 'get-app-webhook-deliveries',
  summary: "A webhook destination's recent deliveries",
  path: '/app/{organization}/console/webhooks/{webhook_destination_id}',
  request: { path: webhookDeliveriesPath },
});

/*
 * The console's operator view (a platform extension, docs/operators.md): a conversation's live
 * transcript with take over, reply, guidance and hand back. Each form stands in for the API's
 * operator operation, in its rate-limit bucket, and comes back to the view (a refusal the view
 * can explain comes back with its `notice`).
 */
export const getAppOperatorConversationOperation = page({
  operationId: 'get-app-operator-conversation',
  summary: "The operator view of a conversation: who has it, its transcript followed live, and the operator's actions",
  path: '/app/{organization}/console/operator/{conversation_id}',
  request: { path: appConversationPath, query: operatorViewQuery },
});

export const takeOverAppConversationOperation = formPost({
  operationId: 'take-over-app-conversation',
  summary: 'Take the conversation over from the agent (operator view)',
  path: '/app/{organization}/console/operator/{conversation_id}/take_over',
  rateLimitPerMinute: 30,
  request: { path: appConversationPath, body: csrfForm, bodyType: 'form' },
});

export const sendAppOperatorMessageOperation = formPost({
  operationId: 'send-app-operator-message',
  summary: 'Send the user a message as the operator holding the conversation (operator view)',
  path: '/app/{organization}/console/operator/{conversation_id}/messages',
  rateLimitPerMinute: 60,
  request: { path: appConversationPath, body: operatorMessageForm, bodyType: 'form' },
});

export const sendAppOperatorGuidanceOperation = formPost({
  operationId: 'send-app-operator-guidance',
  summary: 'Tell the agent something the user does not see (operator view)',
  path: '/app/{organization}/console/operator/{conversation_id}/guidance',
  rateLimitPerMinute: 30,
  request: { path: appConversationPath, body: operatorGuidanceForm, bodyType: 'form' },
});

export const handBackAppConversationOperation = formPost({
  operationId: 'hand-back-app-conversation',
  summary: 'Hand the conversation back to the agent with an outcome and a note (operator view)',
  path: '/app/{organization}/console/operator/{conversation_id}/hand_back',
  rateLimitPerMinute: 30,
  request: { path: appConversationPath, body: handBackForm, bodyType: 'form' },
});

/*
 * The console's pages over the organization's lake: their own function (`app-analytics`), which
 * carries the SQL query's engine as the admin group's does, and the memory it needs; every other
 * page stays on the web app's lean function. API Gateway routes their paths to it explicitly,
 * beside the app's greedy resource.
 */
export const getAppDashboardOperation = lakePage({
  operationId: 'get-app-dashboard',
  summary:
    "The console's dashboard: conversations and escalations per day, first token and first audio p50/p95, cost per day and per conversation, metric pass rates per version set, the busiest states and the slowest tools, each one SQL query over the organization's lake",
  path: '/app/{organization}/console/dashboard',
  request: { path: appPath, query: dashboardQuery },
});

export const getAppConversationSearchOperation = lakePage({
  operationId: 'get-app-conversation-search',
  summary:
    'Conversations found by service, version set, period, status, escalation, real or simulated, cost or latency over a threshold and words said (console), paged',
  path: '/app/{organization}/console/conversations',
  request: { path: appPath, query: conversationSearchQuery },
});

export const getAppAssetOperation = defineOperation({
  operationId: 'get-app-asset',
  method: 'GET',
  path: '/app/{organization}/assets/{asset}',
  group: 'app',
  tag: 'App',
  summary: "A script the console's charts need: the charting library (Chart.js), and what draws the charts with it",
  auth: 'none',
  streaming: true,
  ignoresUndeclaredQuery: true,
  request: { path: assetPath },
  response: { status: 200, body: z.string(), contentType: 'text/javascript; charset=utf-8' },
});

export const getAppBrandingImageOperation = defineOperation({
  operationId: 'get-app-branding-image',
  method: 'GET',
  path: '/app/{organization}/branding/{image}',
  group: 'app',
  tag: 'App',
  summary: "One of the organization's PNG images (logo, square logo, sign-up page headshot)",
  auth: 'none',
  streaming: true,
  ignoresUndeclaredQuery: true,
  request: { path: brandingImagePath },
  response: { status: 200, body: z.instanceof(Buffer), contentType: 'image/png' },
});

export const getAppFaviconOperation = defineOperation({
  operationId: 'get-app-favicon',
  method: 'GET',
  path: '/app/{organization}/favicon.ico',
  group: 'app',
  tag: 'App',
  summary: "The organization's favicon",
  auth: 'none',
  streaming: true,
  ignoresUndeclaredQuery: true,
  request: { path: appPath },
  response: { status: 200, body: z.instanceof(Buffer), contentType: 'image/x-icon' },
});

export const getAppScriptOperation = defineOperation({
  operationId: 'get-app-script',
  method: 'GET',
  path: '/app/{organization}/app.js',
  group: 'app',
  tag: 'App',
  summary: "The pages' script (progressive enhancement: streamed chat replies)",
  auth: 'none',
  streaming: true,
  ignoresUndeclaredQuery: true,
  request: { path: appPath },
  response: { status: 200, body: z.string(), contentType: 'text/javascript; charset=utf-8' },
});

export const appOperations = [
  getAppHomeOperation,
  requestAppSignInLinkOperation,
  completeAppSignInOperation,
  signOutOfAppOperation,
  getAppOnboardingOperation,
  startAppConversationOperation,
  getAppConversationOperation,
  sendAppMessageOperation,
  sendAppVoiceMessageOperation,
  getAppConversationEventsOperation,
  createAppTalkTokenOperation,
  finishAppConversationOperation,
  getAppPreferencesOperation,
  updateAppPreferencesOperation,
  getAppConsoleOperation,
  getAppConsoleConversationOperation,
  getAppMessageAudioOperation,
  getAppCallsOperation,
  getAppCallOperation,
  getAppOperatorQueueOperation,
  getAppServicesOperation,
  getAppWebhooksOperation,
  getAppSimulationsOperation,
  getAppDashboardOperation,
  getAppConversationSearchOperation,
  getAppAssetOperation,
  createAppRegressionTestOperation,
  getAppServiceDiagramOperation,
  getAppWebhookDeliveriesOperation,
  getAppOperatorConversationOperation,
  takeOverAppConversationOperation,
  sendAppOperatorMessageOperation,
  sendAppOperatorGuidanceOperation,
  handBackAppConversationOperation,
  getAppBrandingImageOperation,
  getAppFaviconOperation,
  getAppScriptOperation,
] as const;
