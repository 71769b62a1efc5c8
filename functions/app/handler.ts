import { Readable } from 'node:stream';
import { clientScript } from '#shared/app/client-script';
import { consoleCall, consoleCalls } from '#shared/app/console-calls';
import { consoleConversation } from '#shared/app/console-conversation';
import {
  consoleOperatorConversation,
  consoleOperatorQueue,
  consoleOverview,
  consoleServiceDiagram,
  consoleServices,
  consoleSimulations,
  consoleWebhookDeliveries,
  consoleWebhooks,
} from '#shared/app/console-pages';
import { cookieHeader, csrfCookie, isSignInSecret, sessionCookie, signInCookie } from '#shared/app/cookies';
import { requireCsrfToken } from '#shared/app/csrf';
import { errorPage } from '#shared/app/error-page';
import { appOperations } from '#shared/app/operations';
import { appPublicHome } from '#shared/app/organization-host';
import { consolePage, signInPage } from '#shared/app/page-parts';
import { conversationPage, homePage, onboardingPage, preferencesPage } from '#shared/app/pages';
import type { operatorNotices } from '#shared/app/schemas';
import { appSimulationOperations } from '#shared/app/simulation-operations';
import { consoleSimulationBacktest, consoleSimulationSession } from '#shared/app/simulation-workbench';
import { talkScript } from '#shared/app/talk-script';
import { appSessionLifetimeSeconds, endAppSession, openAppSession } from '#shared/auth/app-sessions';
import { enforceRateLimit } from '#shared/auth/rate-limit';
import { newSecret } from '#shared/auth/secrets';
import { interactWithConversation, startConversation } from '#shared/conversation/conversations';
import { getConversationEvents } from '#shared/conversation/event-replay';
import { finishConversation } from '#shared/conversation/finishing';
import {
  handBackConversationOperation,
  sendOperatorGuidanceOperation,
  sendOperatorMessageOperation,
  takeOverConversationOperation,
} from '#shared/conversation/operator/operator-operations';
import {
  handBackConversation,
  sendOperatorGuidance,
  sendOperatorMessage,
  takeOverConversation,
} from '#shared/conversation/operator/operators';
import { getMessageAudio } from '#shared/conversation/queries';
import {
  createConversationOperation,
  getConversationEventsOperation,
  interactWithConversationOperation,
} from '#shared/conversation/stream-operations';
import {
  allowMediaFrom,
  type BrowserRequest,
  browserOf,
  htmlReply,
  page,
  redirect,
  signedInForm,
} from '#shared/http/browser-session';
import { implementGroup, type RequestContext, streamHandler } from '#shared/http/http-handler';
import type { Caller } from '#shared/kernel/caller';
import { config } from '#shared/kernel/config';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
} from '#shared/kernel/errors';
import { getBrandingImage } from '#shared/organization/index';
import { createBacktestOperation } from '#shared/simulation/backtest-operations';
import { createBacktestRequest } from '#shared/simulation/backtest-schemas';
import { createBacktest } from '#shared/simulation/backtests';
import { createUnitTestFromConversation } from '#shared/simulation/from-conversation';
import {
  createSessionOperation,
  forkSessionOperation,
  stepSessionOperation,
} from '#shared/simulation/session-operations';
import { defaultSessionHours, maxForkAlternatives } from '#shared/simulation/session-schemas';
import {
  createSimulationSession,
  forkSimulationSession,
  stepSimulationSession,
} from '#shared/simulation/session-steps';
import {
  emailSignInLifetimeSeconds,
  limitEmailSignIn,
  redeemAppSignInLink,
  signInWithEmail,
} from '#shared/user/sign-in';
import { updateUser } from '#shared/user/users';
import { issueVoiceSessionToken } from '#shared/voice/session-token';

/**
 * The web app's group. It turns the browser's cookies into the request's caller (the session
 * cookie holds a platform access token, verified exactly as an Authorization header would be)
 * and its CSRF nonce, checks the CSRF token of every form, and renders the pages of
 * `shared/app/pages.ts`, which read through the domain functions as that caller.
 */

/** The chat shows the agent's messages, none of its actions. */
const chatActionTypes = /^$/;

/** Takes a request from the caller's bucket of the API operation the app stands in for. */
const limitAs = async (
  operation: { operationId: string; rateLimitPerMinute: number },
  caller: Caller,
  context: RequestContext,
) => {
  const limits = await enforceRateLimit({
    caller,
    operationId: operation.operationId,
    perMinute: operation.rateLimitPerMinute,
  });
  for (const [name, value] of Object.entries(limits)) context.setHeader(name, value);
};

/**
 * A message, typed or recorded, through the API's interact (in its rate-limit bucket); a
 * spoken reply is MP3, which every browser plays.
 */
const sendMessage = async (
  input: BrowserRequest & { path: { conversation_id: string } },
  csrfToken: string | undefined,
  speakReplies: boolean,
  message: { text: string; heard?: { body: Buffer; contentType?: string } },
) => {
  const { request, caller } = await signedInForm(input, csrfToken);
  await limitAs(interactWithConversationOperation, caller, input.context);
  const output = speakReplies ? { audioFormat: 'mp3' as const } : undefined;
  return interactWithConversation(request.orgId, caller, {
    conversationId: input.path.conversation_id,
    messageType: 'user-message',
    text: message.text,
    externalEvents: [],
    stream: { agentActionType: chatActionTypes },
    voice: message.heard || output ? { input: message.heard, output } : undefined,
  });
};

/**
 * An operator view's form: the API operation's domain function as the signed-in caller, in its
 * rate-limit bucket, then back to the view; a 409 comes back as the view's `notice` (what was
 * refused, said on the page) rather than an error page.
 */
const operatorAction = async (
  input: BrowserRequest & { path: { conversation_id: string } },
  csrfToken: string | undefined,
  operation: { operationId: string; rateLimitPerMinute: number },
  refused: (error: ConflictError) => (typeof operatorNotices)[number],
  act: (orgId: string, caller: Caller) => Promise<unknown>,
) => {
  const { request, caller } = await signedInForm(input, csrfToken);
  await limitAs(operation, caller, input.context);
  const view = `${request.base}/console/operator/${input.path.conversation_id}`;
  try {
    await act(request.orgId, caller);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return redirect(input.context, `${view}?notice=${refused(error)}`);
  }
  return redirect(input.context, view);
};

const image = (bytes: Uint8Array | undefined, what: string, context: RequestContext) => {
  if (!bytes) throw new NotFoundError(`The organization has no ${what}.`);
  context.setHeader('cache-control', 'public, max-age=300');
  return { bytes: Readable.from([Buffer.from(bytes)]) };
};

export const handler = streamHandler(
  implementGroup('app', [appOperations, appSimulationOperations], {
    'get-app-home': page(homePage),

    'request-app-sign-in-link': async (input) => {
      const { path, body, context } = input;
      const { request, cookies, scope } = await browserOf(input);
      await requireCsrfToken(request.orgId, cookies[csrfCookie], body.csrf_token);
      const headers = await limitEmailSignIn(path.organization, body.email);
      for (const [name, value] of Object.entries(headers)) context.setHeader(name, value);
      // The link signs in this browser alone: it carries the hash of this cookie's secret, kept
      // while a link may be in flight, so each link the browser asked for works in it.
      const browser = isSignInSecret(cookies[signInCookie]) ? cookies[signInCookie] : newSecret();
      context.setHeader('set-cookie', cookieHeader(signInCookie, browser, scope, emailSignInLifetimeSeconds));
      const home = appPublicHome(request.orgId, request.base, config);
      await signInWithEmail(request.orgId, body.email, { completionPage: `${home}/sign-in/complete`, browser }).catch(
        (error: unknown) => {
          // Whether an address belongs to a user is not told to whoever types it in.
          if (!(error instanceof NotFoundError || error instanceof ForbiddenError)) throw error;
        },
      );
      return htmlReply(await signInPage(request, `If ${body.email} may sign in, a link is on its way to it.`));
    },

    'complete-app-sign-in': async (input) => {
      const { request, cookies, scope } = await browserOf(input);
      const userId = await redeemAppSignInLink(request.orgId, input.query.token, cookies[signInCookie]);
      const issued = await openAppSession(request.orgId, userId);
      input.context.setHeader(
        'set-cookie',
        cookieHeader(sessionCookie, issued.token, scope, appSessionLifetimeSeconds),
      );
      return redirect(input.context, `${request.base}/`);
    },

    'sign-out-of-app': async (input) => {
      const { request, cookies, scope } = await browserOf(input);
      await requireCsrfToken(request.orgId, cookies[csrfCookie], input.body.csrf_token);
      // Ends the session, not only the cookie: its token and the talk tokens handed to its pages stop working.
      const { caller } = request;
      if (caller?.appSessionId !== undefined) await endAppSession(caller.homeOrgId, caller.appSessionId);
      input.context.setHeader('set-cookie', cookieHeader(sessionCookie, '', scope, 0));
      return redirect(input.context, `${request.base}/`);
    },

    'get-app-onboarding': page(onboardingPage),

    'start-app-conversation': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await limitAs(createConversationOperation, caller, input.context);
      return startConversation(request.orgId, caller, {
        serviceId: input.body.service_id,
        versionSetName: 'release',
        tags: {},
        stream: { agentActionType: chatActionTypes },
      });
    },

    'get-app-conversation': (input) => page((request) => conversationPage(request, input.path.conversation_id))(input),

    'send-app-message': async (input) =>
      sendMessage(input, input.body.csrf_token, input.body.speak_replies === 'on', { text: input.body.message }),

    'send-app-voice-message': async (input) =>
      sendMessage(input, input.headers['x-csrf-token'], input.query.speak_replies === 'on', {
        text: '',
        heard: { body: input.context.rawBody, contentType: input.headers['content-type'] },
      }),

    'get-app-conversation-events': async (input) => {
      const { request, caller } = await signedInForm(input, input.headers['x-csrf-token']);
      await limitAs(getConversationEventsOperation, caller, input.context);
      return getConversationEvents(request.orgId, caller, {
        conversationId: input.path.conversation_id,
        afterEventId: input.query.after,
        agentActionType: chatActionTypes,
      });
    },

    'create-app-talk-token': async (input) => {
      const { request, caller } = await signedInForm(input, input.headers['x-csrf-token']);
      await limitAs(interactWithConversationOperation, caller, input.context);
      const token = await issueVoiceSessionToken(request.orgId, caller, input.path.conversation_id);
      return { bytes: Readable.from([JSON.stringify(token)]) };
    },

    'finish-app-conversation': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await finishConversation(request.orgId, caller, input.path.conversation_id);
      return redirect(input.context, `${request.base}/conversations/${input.path.conversation_id}`);
    },

    'get-app-preferences': page((request) => preferencesPage(request)),

    'update-app-preferences': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await updateUser(request.orgId, caller, caller.userId, {
        preferred_language: input.body.preferred_language,
        timezone: input.body.timezone,
        enable_response_recommendation: input.body.enable_response_recommendation === 'on',
      });
      return redirect(input.context, `${request.base}/preferences`);
    },

    'get-app-console': page(consolePage(consoleOverview)),

    'get-app-console-conversation': (input) =>
      page(consolePage((request, caller) => consoleConversation(request, caller, input.path.conversation_id)))(input),

    'get-app-message-audio': async (input) => {
      const { request } = await browserOf(input);
      if (!request.caller) throw new UnauthorizedError();
      const audio = await getMessageAudio(
        request.orgId,
        request.caller,
        input.path.conversation_id,
        input.path.message_id,
      );
      input.context.setHeader('content-type', audio.contentType);
      return { bytes: audio.body };
    },

    'get-app-calls': (input) =>
      page(consolePage((request, caller) => consoleCalls(request, caller, input.query)))(input),

    'get-app-call': async (input) => {
      // The recording plays from the bucket's presigned URLs: the page's policy names their origin.
      let mediaOrigins: string[] = [];
      const reply = await page(
        consolePage(async (request, caller) => {
          const call = await consoleCall(request, caller, input.path.call_sid);
          mediaOrigins = call.mediaOrigins;
          return call;
        }),
      )(input);
      allowMediaFrom(input.context, mediaOrigins);
      return reply;
    },

    'get-app-operator-queue': page(consolePage(consoleOperatorQueue)),

    'get-app-services': page(consolePage(consoleServices)),

    'get-app-webhooks': page(consolePage(consoleWebhooks)),

    'get-app-simulations': page(consolePage(consoleSimulations)),

    'create-app-regression-test': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await createUnitTestFromConversation(request.orgId, caller, {
        conversation_id: input.path.conversation_id,
        metric_ids: [input.body.metric_id],
      });
      return redirect(input.context, `${request.base}/console`);
    },

    'get-app-simulation-session': (input) =>
      page(
        consolePage((request, caller) => consoleSimulationSession(request, caller, input.path.simulation_session_id)),
      )(input),

    'create-app-simulation-session': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await limitAs(createSessionOperation, caller, input.context);
      const { from_conversation_id: from, at_interaction_id: at, service_id: serviceId } = input.body;
      const created = await createSimulationSession(
        request.orgId,
        caller,
        from && at
          ? { from_conversation_id: from, at_interaction_id: at, ttl_hours: defaultSessionHours }
          : {
              service_id: serviceId ?? '',
              version_set_name: input.body.version_set_name ?? 'release',
              tool_mocks: [],
              ttl_hours: defaultSessionHours,
            },
      );
      return redirect(input.context, `${request.base}/console/simulations/sessions/${created.id}`);
    },

    'step-app-simulation-session': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await limitAs(stepSessionOperation, caller, input.context);
      await stepSimulationSession(request.orgId, caller, input.path.simulation_session_id, input.body.caller_text);
      return redirect(
        input.context,
        `${request.base}/console/simulations/sessions/${input.path.simulation_session_id}`,
      );
    },

    'fork-app-simulation-session': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await limitAs(forkSessionOperation, caller, input.context);
      const alternatives = input.body.alternatives
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line !== '');
      if (alternatives.length === 0 || alternatives.length > maxForkAlternatives) {
        throw new BadRequestError(`Give from 1 to ${maxForkAlternatives} alternatives, one per line.`);
      }
      await forkSimulationSession(request.orgId, caller, input.path.simulation_session_id, {
        at_interaction_id: input.body.at_interaction_id,
        alternatives: alternatives.map((caller_text) => ({ caller_text })),
      });
      return redirect(
        input.context,
        `${request.base}/console/simulations/sessions/${input.path.simulation_session_id}`,
      );
    },

    'get-app-simulation-backtest': (input) =>
      page(
        consolePage((request, caller) => consoleSimulationBacktest(request, caller, input.path.simulation_backtest_id)),
      )(input),

    'create-app-simulation-backtest': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await limitAs(createBacktestOperation, caller, input.context);
      const ids = input.body.conversation_ids?.split(/\s+/).filter((id) => id !== '');
      const since = Date.parse(input.body.since ?? '1970-01-01');
      if (Number.isNaN(since)) throw new BadRequestError('Give the date as YYYY-MM-DD.');
      const parsed = createBacktestRequest.safeParse({
        service_id: input.body.service_id,
        candidate_version_set: input.body.candidate_version_set,
        ...(ids?.length ? { conversation_ids: ids } : { since: new Date(since).toISOString() }),
      });
      if (!parsed.success) throw new BadRequestError(parsed.error.issues.map((issue) => issue.message).join('; '));
      const created = await createBacktest(request.orgId, caller, parsed.data);
      return redirect(input.context, `${request.base}/console/simulations/backtests/${created.id}`);
    },

    'get-app-service-diagram': (input) =>
      page(consolePage((request, caller) => consoleServiceDiagram(request, caller, input.path.service_id)))(input),

    'get-app-webhook-deliveries': (input) =>
      page(
        consolePage((request, caller) => consoleWebhookDeliveries(request, caller, input.path.webhook_destination_id)),
      )(input),

    'get-app-operator-conversation': (input) =>
      page(
        consolePage((request, caller) =>
          consoleOperatorConversation(request, caller, input.path.conversation_id, input.query.notice),
        ),
      )(input),

    'take-over-app-conversation': (input) =>
      operatorAction(
        input,
        input.body.csrf_token,
        takeOverConversationOperation,
        () => 'taken',
        (orgId, caller) => takeOverConversation(orgId, caller, input.path.conversation_id),
      ),

    'send-app-operator-message': (input) =>
      operatorAction(
        input,
        input.body.csrf_token,
        sendOperatorMessageOperation,
        () => 'not-holder',
        (orgId, caller) => sendOperatorMessage(orgId, caller, input.path.conversation_id, input.body.message),
      ),

    'send-app-operator-guidance': (input) =>
      operatorAction(
        input,
        input.body.csrf_token,
        sendOperatorGuidanceOperation,
        () => 'busy',
        (orgId, caller) => sendOperatorGuidance(orgId, caller, input.path.conversation_id, input.body.guidance),
      ),

    'hand-back-app-conversation': (input) =>
      operatorAction(
        input,
        input.body.csrf_token,
        handBackConversationOperation,
        (error) => (error.retryAfterSeconds === undefined ? 'not-holder' : 'busy'),
        (orgId, caller) =>
          handBackConversation(orgId, caller, input.path.conversation_id, {
            outcome: input.body.outcome,
            note: input.body.note,
          }),
      ),

    'get-app-branding-image': async ({ path, context }) =>
      image(await getBrandingImage(path.organization, path.image), path.image, context),

    'get-app-favicon': async ({ path, context }) =>
      image(await getBrandingImage(path.organization, 'favicon'), 'favicon', context),

    'get-app-asset': async ({ path, context }) => {
      // The charting library's text comes from a chunk only these requests load.
      const source =
        path.asset === 'charts.js'
          ? (await import('#shared/app/chart-script')).chartScript
          : await (await import('#shared/app/chart-library')).chartLibrarySource();
      context.setHeader('cache-control', 'public, max-age=86400');
      return { bytes: Readable.from([Buffer.from(source)]) };
    },

    'get-app-script': async ({ context }) => {
      context.setHeader('cache-control', 'public, max-age=300');
      return { bytes: Readable.from([Buffer.from(clientScript + talkScript)]) };
    },
  }),
  { errorPage },
);
