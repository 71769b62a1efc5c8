import { Readable } from 'node:stream';
import { clientScript } from '#shared/app/client-script';
import { type CookieScope, cookieHeader, csrfCookie, parseCookies, sessionCookie } from '#shared/app/cookies';
import { csrfTokenFor, isCsrfNonce, newCsrfNonce, requireCsrfToken } from '#shared/app/csrf';
import type { Html } from '#shared/app/html';
import type { AppRequest } from '#shared/app/layout';
import { appHostHeader, appLocation } from '#shared/app/organization-host';
import {
  consolePage,
  conversationPage,
  homePage,
  insightsPage,
  onboardingPage,
  opensConsole,
  operatorConversationPage,
  preferencesPage,
  redirectPage,
  serviceDiagramPage,
  signInPage,
  webhookDeliveriesPage,
} from '#shared/app/pages';
import type { operatorNotices } from '#shared/app/schemas';
import { talkConnectSources } from '#shared/app/talk-address';
import { talkScript } from '#shared/app/talk-script';
import { enforceRateLimit, takeToken } from '#shared/auth/rate-limit';
import { accessTokenLifetimeSeconds } from '#shared/auth/tokens';
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
import {
  createConversationOperation,
  getConversationEventsOperation,
  interactWithConversationOperation,
} from '#shared/conversation/stream-operations';
import { issueVoiceSessionToken } from '#shared/conversation/voice-session-token';
import { authenticateRequest } from '#shared/http/authenticate';
import { implementGroup, type RequestContext, streamHandler } from '#shared/http/http-handler';
import type { Caller } from '#shared/kernel/caller';
import { config } from '#shared/kernel/config';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '#shared/kernel/errors';
import { getBrandingImage } from '#shared/organization/index';
import { createUnitTestFromConversation } from '#shared/simulation/from-conversation';
import { signInWithEmailOperation } from '#shared/user/operations';
import { redeemEmailSignIn, signInWithEmail } from '#shared/user/sign-in';
import { updateUser } from '#shared/user/users';

/**
 * The web app's group. It turns the browser's cookies into the request's caller (the session
 * cookie holds a platform access token, verified exactly as an Authorization header would be)
 * and its CSRF nonce, checks the CSRF token of every form, and renders the pages of
 * `shared/app/pages.ts`, which read through the domain functions as that caller.
 */

interface BrowserRequest {
  path: { organization: string };
  headers: { cookie?: string; [appHostHeader]?: string };
  context: RequestContext;
}

/** The live voice sessions' origin where they are served on a host of their own (the talk mode's socket). */
const voiceSessionOrigin = talkConnectSources(config.voiceSessionUrl);

const securityHeaders = (context: RequestContext) => {
  // Scripts and styles come from the app itself; nothing may frame it or post its forms elsewhere.
  context.setHeader(
    'content-security-policy',
    `default-src 'self'; connect-src 'self'${voiceSessionOrigin}; img-src 'self'; media-src 'self' blob:; style-src 'self' 'unsafe-inline'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  context.setHeader('x-content-type-options', 'nosniff');
  context.setHeader('referrer-policy', 'same-origin');
  context.setHeader('cache-control', 'no-store');
};

/** The signed-in caller, or undefined when the cookie is absent, expired or not this organization's. */
const sessionCaller = async (orgId: string, token: string | undefined, context: RequestContext) => {
  if (!token) return undefined;
  try {
    return await authenticateRequest({
      orgId,
      headers: { authorization: `Bearer ${token}` },
      method: context.method,
      url: context.url,
    });
  } catch (error) {
    if (error instanceof UnauthorizedError || error instanceof ForbiddenError) return undefined;
    throw error;
  }
};

interface Browser {
  request: AppRequest;
  cookies: Record<string, string>;
  scope: CookieScope;
}

const browserOf = async ({ path, headers, context }: BrowserRequest): Promise<Browser> => {
  const orgId = path.organization;
  const { origin, base, secure } = appLocation(
    new URL(context.url),
    orgId,
    headers[appHostHeader],
    config.frontendDomain,
  );
  const scope: CookieScope = { path: base || '/', secure };
  const cookies = parseCookies(headers.cookie);
  let nonce = cookies[csrfCookie];
  if (!isCsrfNonce(nonce)) {
    nonce = newCsrfNonce();
    // Only pages hand out a nonce: a form posted without one is refused.
    if (context.method === 'GET') context.setHeader('set-cookie', cookieHeader(csrfCookie, nonce, scope, 86_400 * 30));
  }
  const caller = await sessionCaller(orgId, cookies[sessionCookie], context);
  const request: AppRequest = {
    orgId,
    base,
    origin,
    caller,
    csrfToken: await csrfTokenFor(orgId, nonce),
    consoleAllowed: await opensConsole(orgId, caller),
  };
  securityHeaders(context);
  return { request, cookies, scope };
};

/** The chat shows the agent's messages, none of its actions. */
const chatActionTypes = /^$/;

const htmlReply = (page: Html) => ({ bytes: Readable.from([Buffer.from(page.text)]) });

const redirect = (context: RequestContext, location: string) => {
  context.setHeader('location', location);
  return htmlReply(redirectPage(location));
};

/** A posted form, or a request of the page script: its CSRF token checked against the browser's nonce, and a signed-in caller. */
const signedInForm = async (input: BrowserRequest, csrfToken: string | undefined) => {
  const browser = await browserOf(input);
  await requireCsrfToken(browser.request.orgId, browser.cookies[csrfCookie], csrfToken);
  if (!browser.request.caller) throw new UnauthorizedError();
  return { ...browser, caller: browser.request.caller as Caller };
};

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

const page = (render: (request: AppRequest) => Promise<Html>) => async (input: BrowserRequest) =>
  htmlReply(await render((await browserOf(input)).request));

const image = (bytes: Uint8Array | undefined, what: string, context: RequestContext) => {
  if (!bytes) throw new NotFoundError(`The organization has no ${what}.`);
  context.setHeader('cache-control', 'public, max-age=300');
  return { bytes: Readable.from([Buffer.from(bytes)]) };
};

export const handler = streamHandler(
  implementGroup('app', {
    'get-app-home': page(homePage),

    'request-app-sign-in-link': async (input) => {
      const { path, body, context } = input;
      const { request, cookies } = await browserOf(input);
      await requireCsrfToken(request.orgId, cookies[csrfCookie], body.csrf_token);
      const headers = await takeToken(
        {
          orgId: path.organization,
          subject: `signin:email:${body.email.toLowerCase()}`,
          name: signInWithEmailOperation.operationId,
        },
        { burst: signInWithEmailOperation.rateLimitPerMinute, perMinute: signInWithEmailOperation.rateLimitPerMinute },
      );
      for (const [name, value] of Object.entries(headers)) context.setHeader(name, value);
      const home = `${request.origin}${request.base}`;
      await signInWithEmail(request.orgId, body.email, `${home}/`, request.origin, `${home}/sign-in/complete`).catch(
        (error: unknown) => {
          // Whether an address belongs to a user is not told to whoever types it in.
          if (!(error instanceof NotFoundError || error instanceof ForbiddenError)) throw error;
        },
      );
      return htmlReply(await signInPage(request, `If ${body.email} may sign in, a link is on its way to it.`));
    },

    'complete-app-sign-in': async (input) => {
      const { request, scope } = await browserOf(input);
      const { issued } = await redeemEmailSignIn(request.orgId, input.query.token);
      input.context.setHeader(
        'set-cookie',
        cookieHeader(sessionCookie, issued.token, scope, accessTokenLifetimeSeconds),
      );
      return redirect(input.context, `${request.base}/`);
    },

    'sign-out-of-app': async (input) => {
      const { request, cookies, scope } = await browserOf(input);
      await requireCsrfToken(request.orgId, cookies[csrfCookie], input.body.csrf_token);
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

    'get-app-console': page(consolePage),

    'get-app-conversation-insights': (input) =>
      page((request) => insightsPage(request, input.path.conversation_id))(input),

    'create-app-regression-test': async (input) => {
      const { request, caller } = await signedInForm(input, input.body.csrf_token);
      await createUnitTestFromConversation(request.orgId, caller, {
        conversation_id: input.path.conversation_id,
        metric_ids: [input.body.metric_id],
      });
      return redirect(input.context, `${request.base}/console`);
    },

    'get-app-service-diagram': (input) => page((request) => serviceDiagramPage(request, input.path.service_id))(input),

    'get-app-webhook-deliveries': (input) =>
      page((request) => webhookDeliveriesPage(request, input.path.webhook_destination_id))(input),

    'get-app-operator-conversation': (input) =>
      page((request) => operatorConversationPage(request, input.path.conversation_id, input.query.notice))(input),

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

    'get-app-script': async ({ context }) => {
      context.setHeader('cache-control', 'public, max-age=300');
      return { bytes: Readable.from([Buffer.from(clientScript + talkScript)]) };
    },
  }),
);
