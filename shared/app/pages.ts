import { requireConversation } from '../conversation/conversation-lookup';
import { lastEventIdOf } from '../conversation/event-replay';
import { getConversationInsights, listConversations, listMessages } from '../conversation/queries';
import { defaultMessageTypes } from '../conversation/schemas';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../kernel/errors';
import { listMetrics } from '../metric/metrics';
import { getBrandingImage } from '../organization/index';
import { getOrganizationView } from '../organization/organizations';
import { getRoleByName } from '../role/index';
import { listServices } from '../service/services';
import { listStateMachineVersions } from '../state-machine/state-machines';
import { requireVisibleUser } from '../user/users';
import { getWebhookDeliveries, getWebhookDestinations } from '../webhook/destinations';
import { stateMachineDiagram, tallyVisits } from './diagram';
import { type Html, html } from './html';
import { type AppRequest, layout } from './layout';
import { operatorConversationContent, operatorQueueSection } from './operator-view';
import { passRateChart } from './pass-rate-chart';
import type { operatorNotices } from './schemas';
import { recentRunCount, runPassRatesFor, simulatedCoverageFor } from './simulations';
import { talkSessionAddress } from './talk-address';

/**
 * The app's pages. Each reads through the domain functions with the signed-in caller, so a
 * page shows exactly what the API would answer that user, under the same permission checks.
 */

const brandingOf = async (orgId: string) => {
  const organization = await getOrganizationView(orgId, undefined);
  return { organization, branding: { title: organization.title ?? organization.org_name } };
};

const csrfField = (request: AppRequest): Html =>
  html`<input type="hidden" name="csrf_token" value="${request.csrfToken}">`;

const when = (iso: string): string => iso.slice(0, 16).replace('T', ' ');

const percentOf = (rate: number): string => `${Math.round(rate * 100)}%`;

export const signInPage = async (request: AppRequest, notice?: string): Promise<Html> => {
  const { organization, branding } = await brandingOf(request.orgId);
  const [logo, headshot] = await Promise.all([
    getBrandingImage(request.orgId, 'logo'),
    getBrandingImage(request.orgId, 'signup_page_headshot'),
  ]);
  const { base } = request;
  return layout(
    request,
    branding,
    `Sign in to ${branding.title}`,
    html`<div class="signin"><div>
${logo ? html`<img class="logo" src="${base}/branding/logo" alt="${organization.org_name} logo" width="400" height="160">` : ''}
${organization.main_description ? html`<p class="lead">${organization.main_description}</p>` : ''}
${organization.sub_description ? html`<p class="muted">${organization.sub_description}</p>` : ''}
${notice ? html`<p role="status"><strong>${notice}</strong></p>` : ''}
<form method="post" action="${base}/sign-in">${csrfField(request)}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">E-mail me a sign-in link</button>
</form></div>
${headshot ? html`<img class="headshot" src="${base}/branding/signup_page_headshot" alt="">` : ''}
</div>`,
  );
};

const signedIn = (request: AppRequest): Caller => {
  if (!request.caller) throw new UnauthorizedError();
  return request.caller;
};

export const homePage = async (request: AppRequest): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = request.caller;
  const [{ branding }, services, conversations] = await Promise.all([
    brandingOf(request.orgId),
    listServices(request.orgId, caller, { isActive: true, tags: [], sortBy: [], limit: 50, continuationToken: 0 }),
    listConversations(request.orgId, caller, {
      userIds: [caller.userId],
      tags: [],
      sortBy: [],
      limit: 20,
      continuationToken: 0,
    }),
  ]);
  const names = new Map(services.services.map((service) => [service.id, service.name]));
  const { base } = request;
  return layout(
    request,
    branding,
    'Chat',
    html`<section aria-labelledby="start-heading"><h2 id="start-heading">Start a conversation</h2>
${
  services.services.length === 0
    ? html`<p class="muted">No service is open to you yet.</p>`
    : html`<form method="post" action="${base}/conversations" data-stream="transcript" data-conversations="${base}/conversations">${csrfField(request)}
<label for="service_id">Service</label>
<select id="service_id" name="service_id">${services.services.map((service) => html`<option value="${service.id}">${service.name}</option>`)}</select>
<button type="submit">Start</button></form>
<ol id="transcript" class="transcript" aria-live="polite"></ol><p id="chat-status" class="muted" role="status"></p>`
}</section>
<section aria-labelledby="past-heading"><h2 id="past-heading">Your conversations</h2>
${
  conversations.conversations.length === 0
    ? html`<p class="muted">None yet.</p>`
    : html`<ul>${conversations.conversations.map(
        (conversation) =>
          html`<li><a href="${base}/conversations/${conversation.id}">${names.get(conversation.service_id) ?? 'Conversation'}, ${when(conversation.created_at)}</a> <span class="muted">${conversation.is_finished ? 'finished' : 'open'} · ${conversation.num_messages} messages</span></li>`,
      )}</ul>`
}</section>`,
  );
};

export const onboardingPage = async (request: AppRequest): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const { organization, branding } = await brandingOf(request.orgId);
  const pages = organization.onboarding_instructions;
  // The markdown renderer (~95 KiB) serves this page alone: a cold start does not load it.
  const { renderMarkdown } = await import('./markdown');
  return layout(
    request,
    branding,
    'Onboarding',
    pages.length === 0
      ? html`<p class="muted">There are no onboarding pages.</p>`
      : html`${pages.map((source, index) => html`<article class="card" aria-label="Onboarding page ${index + 1}">${renderMarkdown(source)}</article>`)}`,
  );
};

/** How often an open conversation's page asks for messages that came between turns, when the last stream ended (ms). */
export const chatFollowMs = 5_000;

export const conversationPage = async (request: AppRequest, conversationId: string): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = request.caller;
  const [{ branding }, listed, messages, lastEventId] = await Promise.all([
    brandingOf(request.orgId),
    listConversations(request.orgId, caller, {
      ids: [conversationId],
      tags: [],
      sortBy: [],
      limit: 1,
      continuationToken: 0,
    }),
    listMessages(request.orgId, caller, conversationId, {
      messageTypes: defaultMessageTypes,
      sortBy: [{ field: 'created_at', direction: 'asc' }],
      limit: 200,
      continuationToken: 0,
    }),
    lastEventIdOf(request.orgId, conversationId),
  ]);
  const conversation = listed.conversations[0];
  if (!conversation) throw new NotFoundError(`Conversation ${conversationId} does not exist.`);
  const { base } = request;
  const path = `${base}/conversations/${conversation.id}`;
  // An open conversation is followed between turns: an operator's message arrives on its own.
  const follow = conversation.is_finished
    ? ''
    : html` data-follow="${path}/events" data-after="${lastEventId ?? ''}" data-csrf="${request.csrfToken}" data-interval="${chatFollowMs}"`;
  return layout(
    request,
    branding,
    `Conversation of ${when(conversation.created_at)}`,
    html`<ol id="transcript" class="transcript" aria-live="polite"${follow}>${messages.messages.map(
      (message) =>
        html`<li class="message ${message.message_type === 'user-message' ? 'user' : 'agent'}">${message.message}</li>`,
    )}</ol><p id="chat-status" class="muted" role="status"></p>
${
  conversation.is_finished
    ? html`<p class="muted">This conversation is finished.</p>`
    : html`<form method="post" action="${path}/messages" data-stream="transcript" data-conversation="${path}">${csrfField(request)}
<label for="message">Your message</label>
<textarea id="message" name="message" required></textarea>
<label for="speak_replies"><input id="speak_replies" name="speak_replies" type="checkbox" value="on"> Speak replies</label>
<button type="submit">Send</button> <button type="button" id="record" data-voice="${path}/voice-messages" data-csrf="${request.csrfToken}" hidden>Record</button>
${talkButton(request, path, conversation.id)}</form>
<form method="post" action="${path}/finish">${csrfField(request)}<button type="submit">Finish the conversation</button></form>`
}${request.consoleAllowed ? html`<p><a href="${base}/console/conversations/${conversation.id}">Insights</a></p>` : ''}`,
  );
};

/** The talk mode's button, where the deployment serves live voice sessions (`talk-address.ts`). */
const talkButton = (request: AppRequest, path: string, conversationId: string): Html | string => {
  const session = talkSessionAddress(config.voiceSessionUrl, request.orgId, conversationId);
  if (session === undefined) return '';
  return html` <button type="button" id="talk" data-talk="${path}/talk-token" data-csrf="${request.csrfToken}" data-session="${session}" aria-pressed="false" hidden>Talk</button>`;
};

export const preferencesPage = async (request: AppRequest, notice?: string): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = request.caller;
  const [{ branding }, user] = await Promise.all([
    brandingOf(request.orgId),
    requireVisibleUser(request.orgId, caller, caller.userId, 'User:GetUserInfo'),
  ]);
  const preferences = user.preferences;
  return layout(
    request,
    branding,
    'Preferences',
    html`${notice ? html`<p role="status">${notice}</p>` : ''}<form method="post" action="${request.base}/preferences">${csrfField(request)}
<label for="preferred_language">Preferred language (ISO 639-3, e.g. eng)</label>
<input id="preferred_language" name="preferred_language" value="${preferences?.preferred_language ?? ''}" pattern="[a-z]{3}">
<label for="timezone">Time zone (IANA, e.g. Europe/Paris)</label>
<input id="timezone" name="timezone" value="${preferences?.timezone ?? ''}">
<label for="enable_response_recommendation"><input id="enable_response_recommendation" name="enable_response_recommendation" type="checkbox" value="on"${preferences?.enable_response_recommendation ? ' checked' : ''}> Suggest responses I could send</label>
<button type="submit">Save</button></form>`,
  );
};

/** Whether the caller's role opens the console: its `frontend_view` is admin. */
export const opensConsole = async (orgId: string, caller: Caller | undefined): Promise<boolean> =>
  caller !== undefined && (await getRoleByName(orgId, caller.roleName))?.frontend_view === 'admin';

const requireConsole = (request: AppRequest): Caller => {
  const caller = signedIn(request);
  if (!request.consoleAllowed) throw new ForbiddenError("The console is for roles whose frontend_view is 'admin'.");
  return caller;
};

/** A section the caller may not read says so instead of failing the page. */
const orNotPermitted = async (read: () => Promise<Html>): Promise<Html> =>
  read().catch((error: unknown) => {
    if (error instanceof ForbiddenError || error instanceof NotFoundError)
      return html`<p class="muted">Your role may not see this.</p>`;
    throw error;
  });

export const consolePage = async (request: AppRequest): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = requireConsole(request);
  const { base, orgId } = request;
  const [{ branding }, queue, services, conversations, webhooks, simulations] = await Promise.all([
    brandingOf(orgId),
    orNotPermitted(() => operatorQueueSection(request, caller)),
    orNotPermitted(async () => {
      const listed = await listServices(orgId, caller, { tags: [], sortBy: [], limit: 50, continuationToken: 0 });
      return listed.services.length === 0
        ? html`<p class="muted">No services.</p>`
        : html`<ul>${listed.services.map((service) => html`<li><a href="${base}/console/services/${service.id}">${service.name}</a> <span class="muted">${service.is_active ? 'active' : 'inactive'}</span></li>`)}</ul>`;
    }),
    orNotPermitted(async () => {
      const listed = await listConversations(orgId, caller, {
        tags: [],
        sortBy: [],
        limit: 20,
        continuationToken: 0,
      });
      return listed.conversations.length === 0
        ? html`<p class="muted">No conversations.</p>`
        : html`<table><thead><tr><th scope="col">Started</th><th scope="col">User</th><th scope="col">Messages</th><th scope="col">State</th></tr></thead><tbody>${listed.conversations.map(
            (conversation) =>
              html`<tr><td><a href="${base}/console/conversations/${conversation.id}">${when(conversation.created_at)}</a></td><td>${conversation.user_id}</td><td>${conversation.num_messages}</td><td>${conversation.is_finished ? 'finished' : 'open'}</td></tr>`,
          )}</tbody></table>`;
    }),
    orNotPermitted(async () => {
      const listed = await getWebhookDestinations(orgId, caller, undefined);
      return listed.webhook_destinations.length === 0
        ? html`<p class="muted">No webhook destinations.</p>`
        : html`<ul>${listed.webhook_destinations.map((destination) => html`<li><a href="${base}/console/webhooks/${destination.id}">${destination.url}</a></li>`)}</ul>`;
    }),
    orNotPermitted(async () => {
      const runs = await runPassRatesFor(orgId, caller);
      return runs.length === 0
        ? html`<p class="muted">No simulation runs.</p>`
        : html`<p class="muted">The most recent runs you may see (${runs.length}, at most ${recentRunCount}), over their finished conversations: each run's pass rate (blue), then each unit test's (violet).</p>
<div class="diagram-wrap">${passRateChart(runs)}</div>
<table><thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Conversations</th><th scope="col">Pass rate</th><th scope="col">Unit tests</th></tr></thead><tbody>${runs.map(
            (run) =>
              html`<tr data-run="${run.runId}"><td>${run.label}</td><td>${run.status}</td><td>${run.finished} of ${run.total}</td><td>${percentOf(run.passRate)}</td><td>${run.unitTests.map((unitTest) => html`${unitTest.name}: ${percentOf(unitTest.passRate)}<br>`)}</td></tr>`,
          )}</tbody></table>`;
    }),
  ]);
  return layout(
    request,
    branding,
    'Console',
    html`<section aria-labelledby="queue-heading"><h2 id="queue-heading">Operator queue</h2>${queue}</section>
<section aria-labelledby="services-heading"><h2 id="services-heading">Services</h2>${services}</section>
<section aria-labelledby="conversations-heading"><h2 id="conversations-heading">Recent conversations</h2>${conversations}</section>
<section aria-labelledby="webhooks-heading"><h2 id="webhooks-heading">Webhook destinations</h2>${webhooks}</section>
<section aria-labelledby="simulations-heading"><h2 id="simulations-heading">Simulation runs</h2>${simulations}</section>`,
  );
};

const json = (value: unknown): string => JSON.stringify(value, null, 2);

export const insightsPage = async (request: AppRequest, conversationId: string): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = requireConsole(request);
  const [{ branding }, interactions, metrics] = await Promise.all([
    brandingOf(request.orgId),
    getConversationInsights(request.orgId, caller, conversationId),
    listMetrics(request.orgId, caller, { creators: [], tags: [], limit: 50, continuationToken: 0 }),
  ]);
  // A finished conversation can become a regression test (`create-simulation-unit-test-from-conversation`).
  const regressionForm =
    metrics.metrics.length === 0
      ? ''
      : html`<form method="post" action="${request.base}/console/conversations/${conversationId}/regression_test">${csrfField(request)}
<label for="metric_id">Make a regression test of this conversation, judged by</label>
<select id="metric_id" name="metric_id">${metrics.metrics.map((metric) => html`<option value="${metric.id}">${metric.name}</option>`)}</select>
<button type="submit">Make the test</button></form>`;
  return layout(
    request,
    branding,
    'Conversation insights',
    html`<p><a href="${request.base}/conversations/${conversationId}">The conversation's messages</a> · <a href="${request.base}/console/operator/${conversationId}">Operator view</a></p>
${regressionForm}
${interactions.length === 0 ? html`<p class="muted">No interactions yet.</p>` : ''}
${interactions.map((interaction, index) => {
  const toolCalls = interaction.state_transition_logs.flatMap((log) => log.tool_call_logs.flat());
  return html`<section class="card interaction" aria-labelledby="interaction-${index}"><h2 id="interaction-${index}">Interaction ${index + 1} <span class="muted">${when(interaction.created_at)}</span></h2>
<p>State <strong>${interaction.current_state_name}</strong>: ${interaction.current_state_objective}</p>
<h3>State transitions</h3>${
    interaction.state_transition_logs.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<ol>${interaction.state_transition_logs.map((log) => html`<li>${log.previous_state} → ${log.next_state} <span class="muted">(${log.type})</span></li>`)}</ol>`
  }
<h3>Working memory</h3>${
    interaction.working_memory.length === 0
      ? html`<p class="muted">Empty.</p>`
      : html`<ul>${interaction.working_memory.map((entry) => html`<li>${entry.content} <span class="muted">${entry.context}</span></li>`)}</ul>`
  }
<h3>Reflections</h3>${
    interaction.reflections.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<ul>${interaction.reflections.map((reflection) => html`<li>${reflection}</li>`)}</ul>`
  }
<h3>Tool calls</h3>${
    toolCalls.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<ul>${toolCalls.map((call) => html`<li><strong>${call.tool_name}</strong> ${call.tool_version} (${call.duration} s)<pre>${json(call.input)}</pre><pre>${call.output ?? ''}</pre></li>`)}</ul>`
  }</section>`;
})}`,
  );
};

export const operatorConversationPage = async (
  request: AppRequest,
  conversationId: string,
  notice?: (typeof operatorNotices)[number],
): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = requireConsole(request);
  const [{ branding }, { heading, content }] = await Promise.all([
    brandingOf(request.orgId),
    operatorConversationContent(request, caller, conversationId, notice),
  ]);
  return layout(request, branding, heading, content);
};

/** How many recent conversations of a service the diagram's shading counts. */
export const diagramConversations = 20;

export const serviceDiagramPage = async (request: AppRequest, serviceId: string): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = requireConsole(request);
  const { orgId } = request;
  const [{ branding }, listed] = await Promise.all([
    brandingOf(orgId),
    listServices(orgId, caller, { ids: [serviceId], tags: [], sortBy: [], limit: 1, continuationToken: 0 }),
  ]);
  const service = listed.services[0];
  if (!service) throw new NotFoundError(`Service ${serviceId} does not exist.`);
  const [versions, conversations] = await Promise.all([
    listStateMachineVersions(orgId, caller, service.service_hierarchical_state_machine_id, {
      descending: true,
      limit: 1,
      continuationToken: 0,
    }),
    listConversations(orgId, caller, {
      serviceIds: [serviceId],
      tags: [],
      sortBy: [],
      limit: diagramConversations,
      continuationToken: 0,
    }),
  ]);
  const machine = versions.items[0];
  if (!machine) throw new NotFoundError(`The state machine of service ${serviceId} has no version.`);
  // Only real conversations whose insights the caller may read count (simulated ones are the
  // runs' coverage, below); each is one bounded read.
  const [insights, simulated] = await Promise.all([
    Promise.all(
      conversations.conversations.map(async (conversation) => {
        if ((await requireConversation(orgId, conversation.id)).simulation) return [];
        return getConversationInsights(orgId, caller, conversation.id).catch((error: unknown) => {
          if (error instanceof NotFoundError) return [];
          throw error;
        });
      }),
    ),
    simulatedCoverageFor(orgId, caller, service.service_hierarchical_state_machine_id),
  ]);
  const visits = tallyVisits(insights.flat());
  return layout(
    request,
    branding,
    `${service.name}: state machine`,
    html`<p class="muted">Version ${machine.version}. States and transitions are shaded by how often the real conversations among the ${conversations.conversations.length} most recent you may see visited them. <span class="simulated-legend">Dashed outlines and dashed arrows</span> mark what the simulated conversations of the ${recentRunCount} most recent simulation runs you may see covered, in any version of this state machine.</p>
<div class="diagram-wrap">${stateMachineDiagram(machine, visits, simulated)}</div>`,
  );
};

export const webhookDeliveriesPage = async (request: AppRequest, destinationId: string): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = requireConsole(request);
  const [{ branding }, deliveries] = await Promise.all([
    brandingOf(request.orgId),
    getWebhookDeliveries(request.orgId, caller, destinationId, { limit: 50, continuation_token: 0 }),
  ]);
  return layout(
    request,
    branding,
    'Webhook deliveries',
    deliveries.items.length === 0
      ? html`<p class="muted">No deliveries yet.</p>`
      : html`<table><thead><tr><th scope="col">Created</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead><tbody>${deliveries.items.map(
          (delivery) =>
            html`<tr><td>${when(delivery.created_at)}</td><td>${delivery.type}</td><td>${delivery.status}</td><td>${delivery.delivery_attempts.length}</td></tr>`,
        )}</tbody></table>`,
  );
};

/** A short page for redirects (303), for clients that show the body. */
export const redirectPage = (location: string): Html =>
  html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Redirecting</title></head><body><p><a href="${location}">Continue</a></p></body></html>`;
