import { lastEventIdOf } from '../conversation/event-replay';
import { listOperatorQueue } from '../conversation/operator/operators';
import { listConversations, listMessages } from '../conversation/queries';
import { defaultMessageTypes, type MessageInstance, type OperatorControlView } from '../conversation/schemas';
import type { Caller } from '../kernel/caller';
import { ForbiddenError, NotFoundError } from '../kernel/errors';
import { type Html, html } from './html';
import type { AppRequest } from './layout';
import { nameOf, serviceNames, userNames } from './names';
import { csrfField, when } from './page-parts';
import type { operatorNotices } from './schemas';

/**
 * The console's operator view (docs/operators.md): the queue on the console page, and a
 * conversation's page with who has it, its transcript followed live through the events endpoint
 * (the page script, `data-follow`), and the forms to take over, reply, whisper guidance and hand
 * back. Both read through the operators' domain functions as the signed-in caller.
 */

/** How often the operator view asks for new events when the last stream ended (ms). */
export const operatorFollowMs = 2_000;

const statusOf = (control: OperatorControlView): Html => {
  if (control.handover) {
    return html`The agent transferred the call to <strong>${control.handover.phone_to}</strong> (${control.handover.mode}) ${when(control.handover.requested_at)}; the conversation is finished.`;
  }
  if (control.control === 'operator' && control.operator) {
    return html`Held by <strong>${control.operator.name}</strong> since ${when(control.operator.joined_at)}.`;
  }
  if (control.control === 'pending_operator' && control.escalation) {
    return html`Awaiting an operator since ${when(control.escalation.requested_at)} (asked by the ${control.escalation.triggered_by}): ${control.escalation.reason}`;
  }
  return html`The agent has this conversation.`;
};

/** Where a queue entry stands, in the queue's own words (its Since column says since when). */
const queueStatusOf = (control: OperatorControlView): Html => {
  if (control.control === 'operator' && control.operator)
    return html`Held by <strong>${control.operator.name}</strong>`;
  if (control.control === 'pending_operator' && control.escalation)
    return html`Awaiting an operator (asked by the ${control.escalation.triggered_by}): ${control.escalation.reason}`;
  return html`The agent has this conversation.`;
};

/**
 * The console's queue: what awaits an operator, longest waiting first, then what operators hold,
 * each with its user and service by name. `limit` entries (the overview shows a few).
 */
export const operatorQueueSection = async (request: AppRequest, caller: Caller, limit = 20): Promise<Html> => {
  const queue = await listOperatorQueue(request.orgId, caller, { limit, continuationToken: 0 });
  if (queue.entries.length === 0)
    return html`<p class="muted">No conversation awaits an operator or is held by one.</p>`;
  const [users, services] = await Promise.all([
    userNames(
      request.orgId,
      caller,
      queue.entries.map((entry) => entry.user_id),
    ),
    serviceNames(
      request.orgId,
      caller,
      queue.entries.map((entry) => entry.service_id),
    ),
  ]);
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">Since</th><th scope="col">User</th><th scope="col">Service</th><th scope="col">Status</th><th scope="col">Last message</th></tr></thead><tbody>${queue.entries.map(
    (entry) =>
      html`<tr data-conversation="${entry.conversation_id}"><td class="when"><a href="${request.base}/console/operator/${entry.conversation_id}">${when(entry.waiting_since)}</a></td><td>${nameOf(users, entry.user_id)}</td><td>${nameOf(services, entry.service_id)}</td><td>${queueStatusOf(entry.operator_control)}</td><td>${entry.last_message ? `${entry.last_message.sender}: ${entry.last_message.message}` : ''}</td></tr>`,
  )}</tbody></table></div>`;
};

const notices: Record<(typeof operatorNotices)[number], string> = {
  taken: 'Another operator holds this conversation.',
  'not-holder': 'Only the operator holding the conversation may do this: take it over first.',
  busy: 'The conversation is busy: try again in a few seconds.',
  finished: 'This conversation is finished.',
};

const bubble = (message: MessageInstance): Html =>
  message.message_type === 'user-message'
    ? html`<li class="message user">${message.message}</li>`
    : message.from_operator
      ? html`<li class="message agent operator"><span class="sender">${message.sender}:</span> ${message.message}</li>`
      : html`<li class="message agent">${message.message}</li>`;

/** The forms the caller may use, as the conversation's control stands. */
const actionForms = (request: AppRequest, path: string, control: OperatorControlView, caller: Caller): Html => {
  const holds = control.control === 'operator' && control.operator?.user_id === caller.userId;
  const takeOver =
    control.control === 'operator'
      ? ''
      : html`<form method="post" action="${path}/take_over">${csrfField(request)}<button type="submit">Take over</button></form>`;
  const reply = holds
    ? html`<form method="post" action="${path}/messages">${csrfField(request)}
<label for="operator_message">Reply to the user</label>
<textarea id="operator_message" name="message" required></textarea>
<button type="submit">Send to the user</button></form>`
    : '';
  const handBack =
    control.control === 'operator'
      ? html`<form method="post" action="${path}/hand_back">${csrfField(request)}
<label for="outcome">Outcome</label>
<select id="outcome" name="outcome"><option value="resolved">Resolved</option><option value="unresolved">Unresolved</option><option value="needs-follow-up">Needs follow-up</option></select>
<label for="note">Note for the agent (the user does not see it)</label>
<textarea id="note" name="note"></textarea>
<button type="submit">Hand back to the agent</button></form>`
      : '';
  const guidance = html`<form method="post" action="${path}/guidance">${csrfField(request)}
<label for="guidance">Guidance for the agent (the user does not see it)</label>
<textarea id="guidance" name="guidance" required></textarea>
<button type="submit">Whisper to the agent</button></form>`;
  return html`${takeOver}${reply}${handBack}${guidance}`;
};

/**
 * A conversation's operator view. 404 for a conversation the caller may not read, 403 when they
 * may not operate it (the API's answers).
 */
export const operatorConversationContent = async (
  request: AppRequest,
  caller: Caller,
  conversationId: string,
  notice: (typeof operatorNotices)[number] | undefined,
): Promise<{ heading: string; content: Html }> => {
  const { orgId, base } = request;
  const [listed, messages, lastEventId] = await Promise.all([
    listConversations(orgId, caller, { ids: [conversationId], tags: [], sortBy: [], limit: 1, continuationToken: 0 }),
    listMessages(orgId, caller, conversationId, {
      messageTypes: defaultMessageTypes,
      sortBy: [{ field: 'created_at', direction: 'asc' }],
      limit: 200,
      continuationToken: 0,
    }),
    lastEventIdOf(orgId, conversationId),
  ]);
  const conversation = listed.conversations[0];
  if (!conversation) throw new NotFoundError(`Conversation ${conversationId} does not exist.`);
  const control = conversation.operator_control;
  if (!control) throw new ForbiddenError('Missing required permission Conversation:Operate.');
  const path = `${base}/console/operator/${conversationId}`;
  return {
    heading: `Operator view: conversation of ${when(conversation.created_at)}`,
    content: html`${notice ? html`<p class="error" role="alert">${notices[notice]}</p>` : ''}
<p id="operator-status">${statusOf(control)}</p>
<p><a href="${base}/console/conversations/${conversationId}">The whole conversation</a></p>
<h2 id="transcript-heading">Transcript</h2>
<ol id="transcript" class="transcript" aria-labelledby="transcript-heading" aria-live="polite" data-follow="${base}/conversations/${conversationId}/events" data-after="${lastEventId ?? ''}" data-csrf="${request.csrfToken}" data-interval="${operatorFollowMs}">${messages.messages.map(bubble)}</ol>
${conversation.is_finished ? html`<p class="muted">This conversation is finished.</p>` : actionForms(request, path, control, caller)}`,
  };
};
