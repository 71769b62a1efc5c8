import { requireConversation } from '../conversation/conversation-lookup';
import { getConversationInsights, listConversations } from '../conversation/queries';
import type { ConversationInstance } from '../conversation/schemas';
import type { Caller } from '../kernel/caller';
import { NotFoundError } from '../kernel/errors';
import { listServices } from '../service/services';
import { listStateMachineVersions } from '../state-machine/state-machines';
import { getWebhookDeliveries, getWebhookDestinations } from '../webhook/destinations';
import { stateMachineDiagram, tallyVisits } from './diagram';
import { type Html, html } from './html';
import type { AppRequest } from './layout';
import { type Names, nameOf, serviceNames, userNames } from './names';
import { operatorConversationContent, operatorQueueSection } from './operator-view';
import { type ConsoleContent, orNotPermitted, percentOf, when } from './page-parts';
import { passRateChart } from './pass-rate-chart';
import type { operatorNotices } from './schemas';
import { simulationWorkbenchSection } from './simulation-workbench';
import { recentRunCount, runPassRatesFor, simulatedCoverageFor } from './simulations';

/**
 * The console's pages besides a conversation's and the lake's (dashboard, conversation search):
 * the overview, the operators' queue and view, services and their diagrams, webhook
 * destinations and their deliveries, simulation runs. Each reads through the domain functions
 * as the signed-in caller.
 */

/** A conversation's status in a few words: open or finished, who holds it, whom the agent transferred its call to. */
export const statusBadges = (conversation: ConversationInstance, simulated: boolean): Html => {
  const control = conversation.operator_control;
  return html`${conversation.is_finished ? 'finished' : 'open'}${simulated ? html` <span class="badge simulated">simulated</span>` : ''}${
    control?.control === 'pending_operator' ? html` <span class="badge escalated">awaiting an operator</span>` : ''
  }${control?.control === 'operator' ? html` <span class="badge operator">held by ${control.operator?.name ?? 'an operator'}</span>` : ''}${
    control?.handover ? html` <span class="badge operator">transferred to ${control.handover.phone_to}</span>` : ''
  }`;
};

/** Which of the conversations a simulation run made (the record says; the API's view does not). */
const simulatedOf = async (orgId: string, conversations: ConversationInstance[]): Promise<Set<string>> => {
  const records = await Promise.all(conversations.map((conversation) => requireConversation(orgId, conversation.id)));
  return new Set(records.filter((record) => record.simulation).map((record) => record.id));
};

/** A table of conversations, each opening its page, with its service and user by name. */
export const conversationRows = (
  base: string,
  conversations: ConversationInstance[],
  names: { users: Names; services: Names },
  simulated: Set<string>,
): Html =>
  html`<div class="table-wrap"><table><thead><tr><th scope="col">Started</th><th scope="col">Service</th><th scope="col">User</th><th scope="col" class="number">Messages</th><th scope="col">Status</th></tr></thead><tbody>${conversations.map(
    (conversation) =>
      html`<tr data-conversation="${conversation.id}"><td class="when"><a href="${base}/console/conversations/${conversation.id}">${when(conversation.created_at)}</a></td><td>${nameOf(names.services, conversation.service_id)}</td><td>${nameOf(names.users, conversation.user_id)}</td><td class="number">${conversation.num_messages}</td><td>${statusBadges(conversation, simulated.has(conversation.id))}</td></tr>`,
  )}</tbody></table></div>`;

/** How many recent conversations the overview lists. */
const overviewConversations = 10;

export const consoleOverview = async (request: AppRequest, caller: Caller): Promise<ConsoleContent> => {
  const { base, orgId } = request;
  const [queue, recent] = await Promise.all([
    orNotPermitted(() => operatorQueueSection(request, caller, 5)),
    orNotPermitted(async () => {
      const listed = await listConversations(orgId, caller, {
        tags: [],
        sortBy: [],
        limit: overviewConversations,
        continuationToken: 0,
      });
      if (listed.conversations.length === 0) return html`<p class="muted">No conversation yet.</p>`;
      const [users, services, simulated] = await Promise.all([
        userNames(
          orgId,
          caller,
          listed.conversations.map((conversation) => conversation.user_id),
        ),
        serviceNames(
          orgId,
          caller,
          listed.conversations.map((conversation) => conversation.service_id),
        ),
        simulatedOf(orgId, listed.conversations),
      ]);
      return conversationRows(base, listed.conversations, { users, services }, simulated);
    }),
  ]);
  return {
    section: 'overview',
    heading: 'Console',
    wide: true,
    content: html`<div class="cards">
<section class="card" aria-labelledby="dashboard-card"><h2 id="dashboard-card">Dashboard</h2><p>Conversations per day, escalations, how fast the agent answers, what it costs and how the metrics trend, from the organization's lake.</p><p><a href="${base}/console/dashboard">Open the dashboard</a></p></section>
<section class="card" aria-labelledby="find-card"><h2 id="find-card">Find conversations</h2><p>By service, version set, date, status, escalation, cost or latency, or the words said.</p><p><a href="${base}/console/conversations">Search conversations</a></p></section>
</div>
<section aria-labelledby="queue-heading"><h2 id="queue-heading">Operator queue</h2>${queue}<p><a href="${base}/console/operator">The whole queue</a></p></section>
<section aria-labelledby="recent-heading"><h2 id="recent-heading">Recent conversations</h2>${recent}</section>`,
  };
};

export const consoleOperatorQueue = async (request: AppRequest, caller: Caller): Promise<ConsoleContent> => ({
  section: 'operators',
  heading: 'Operator queue',
  wide: true,
  content: html`<p class="muted">Conversations awaiting an operator, longest waiting first, then those operators hold.</p>${await orNotPermitted(
    () => operatorQueueSection(request, caller, 50),
  )}`,
});

export const consoleOperatorConversation = async (
  request: AppRequest,
  caller: Caller,
  conversationId: string,
  notice: (typeof operatorNotices)[number] | undefined,
): Promise<ConsoleContent> => {
  const { heading, content } = await operatorConversationContent(request, caller, conversationId, notice);
  return { section: 'operators', heading, content };
};

export const consoleServices = async (request: AppRequest, caller: Caller): Promise<ConsoleContent> => ({
  section: 'services',
  heading: 'Services',
  content: await orNotPermitted(async () => {
    const listed = await listServices(request.orgId, caller, { tags: [], sortBy: [], limit: 50, continuationToken: 0 });
    return listed.services.length === 0
      ? html`<p class="muted">No service yet.</p>`
      : html`<p class="muted">Each service's state machine, shaded by where recent conversations went.</p><ul>${listed.services.map(
          (service) =>
            html`<li><a href="${request.base}/console/services/${service.id}">${service.name}</a> <span class="muted">${service.is_active ? 'active' : 'inactive'} · version sets ${Object.keys(service.version_sets).join(', ')}</span></li>`,
        )}</ul>`;
  }),
});

/** How many recent conversations of a service the diagram's shading counts. */
export const diagramConversations = 20;

export const consoleServiceDiagram = async (
  request: AppRequest,
  caller: Caller,
  serviceId: string,
): Promise<ConsoleContent> => {
  const { orgId } = request;
  const listed = await listServices(orgId, caller, {
    ids: [serviceId],
    tags: [],
    sortBy: [],
    limit: 1,
    continuationToken: 0,
  });
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
  return {
    section: 'services',
    heading: `${service.name}: state machine`,
    wide: true,
    content: html`<p class="muted">Version ${machine.version}. States and transitions are shaded by how often the real conversations among the ${conversations.conversations.length} most recent you may see visited them. <span class="simulated-legend">Dashed outlines and dashed arrows</span> mark what the simulated conversations of the ${recentRunCount} most recent simulation runs you may see covered, in any version of this state machine.</p>
<div class="diagram-wrap">${stateMachineDiagram(machine, visits, simulated)}</div>`,
  };
};

export const consoleWebhooks = async (request: AppRequest, caller: Caller): Promise<ConsoleContent> => ({
  section: 'webhooks',
  heading: 'Webhook destinations',
  content: await orNotPermitted(async () => {
    const listed = await getWebhookDestinations(request.orgId, caller, undefined);
    return listed.webhook_destinations.length === 0
      ? html`<p class="muted">No webhook destination yet.</p>`
      : html`<ul>${listed.webhook_destinations.map((destination) => html`<li><a href="${request.base}/console/webhooks/${destination.id}">${destination.url}</a> <span class="muted">its recent deliveries</span></li>`)}</ul>`;
  }),
});

export const consoleWebhookDeliveries = async (
  request: AppRequest,
  caller: Caller,
  destinationId: string,
): Promise<ConsoleContent> => {
  const deliveries = await getWebhookDeliveries(request.orgId, caller, destinationId, {
    limit: 50,
    continuation_token: 0,
  });
  return {
    section: 'webhooks',
    heading: 'Webhook deliveries',
    content:
      deliveries.items.length === 0
        ? html`<p class="muted">No delivery yet.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">Created</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col" class="number">Attempts</th></tr></thead><tbody>${deliveries.items.map(
            (delivery) =>
              html`<tr><td>${when(delivery.created_at)}</td><td>${delivery.type}</td><td>${delivery.status}</td><td class="number">${delivery.delivery_attempts.length}</td></tr>`,
          )}</tbody></table></div>`,
  };
};

export const consoleSimulations = async (request: AppRequest, caller: Caller): Promise<ConsoleContent> => ({
  section: 'simulations',
  heading: 'Simulation runs',
  wide: true,
  content: html`${await orNotPermitted(async () => {
    const runs = await runPassRatesFor(request.orgId, caller);
    return runs.length === 0
      ? html`<p class="muted">No simulation run yet.</p>`
      : html`<p class="muted">The most recent runs you may see (${runs.length}, at most ${recentRunCount}), over their finished conversations: each run's pass rate (blue), then each unit test's (violet).</p>
<div class="diagram-wrap">${passRateChart(runs)}</div>
<div class="table-wrap"><table><thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Conversations</th><th scope="col">Pass rate</th><th scope="col">Unit tests</th></tr></thead><tbody>${runs.map(
          (run) =>
            html`<tr data-run="${run.runId}"><td>${run.label}</td><td>${run.status}</td><td>${run.finished} of ${run.total}</td><td>${percentOf(run.passRate)}</td><td>${run.unitTests.map((unitTest) => html`${unitTest.name}: ${percentOf(unitTest.passRate)}<br>`)}</td></tr>`,
        )}</tbody></table></div>`;
  })}${await simulationWorkbenchSection(request, caller)}`,
});
