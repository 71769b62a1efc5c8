import { getCallDetails, getCallRecording, getCallTimeline, listCalls } from '../call/calls';
import type { CallView, TimelineEntry } from '../call/schemas';
import type { Caller } from '../kernel/caller';
import { ForbiddenError, NotFoundError } from '../kernel/errors';
import { holdsAnyGrantOf } from '../kernel/permissions';
import { callLanes, entrySpan, timelineKindWords } from './call-timeline';
import { choice, field, pager } from './filter-form';
import { Html, html } from './html';
import type { AppRequest } from './layout';
import { nameOf, serviceNames } from './names';
import { type ConsoleContent, orNotPermitted, when } from './page-parts';
import type { CallSearchQuery } from './schemas';
import { percentOf } from './turn-view';

/**
 * The console's calls (docs/calls.md): the list, filtered and paged as `list-calls` pages, and a
 * call's page with what its record says, its timeline drawn one lane per side, and both channels
 * of its recording to play. Each reads through the call capability's domain functions as the
 * signed-in caller, so a role sees what the API would show it.
 */

/** How many calls a page lists unless the link says. */
const pageSize = 25;

const statusWords: Record<CallView['status'], string> = {
  queued: 'queued',
  initiated: 'dialling',
  ringing: 'ringing',
  'in-progress': 'in progress',
  completed: 'completed',
  busy: 'busy',
  failed: 'failed',
  'no-answer': 'no answer',
  canceled: 'canceled',
};

/** `1:05` from a number of seconds. */
const minutesAndSeconds = (seconds: number): string =>
  `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;

/** How the call went, in a few words: its status, who answered, whom it was handed to. */
const callStatusBadges = (call: CallView): Html =>
  html`${statusWords[call.status]}${
    call.answered_by?.startsWith('machine') ? html` <span class="badge escalated">answering machine</span>` : ''
  }${call.transfer ? html` <span class="badge operator">transferred to ${call.transfer.phone_to}</span>` : ''}`;

const directionChoices: [string, string][] = [
  ['', 'Both'],
  ['inbound', 'Inbound'],
  ['outbound', 'Outbound'],
];

const statusChoices: [string, string][] = [
  ['', 'Any'],
  ...Object.entries(statusWords).map(([status, words]): [string, string] => [status, words]),
];

const searchForm = (action: string, query: CallSearchQuery): Html =>
  html`<form method="get" action="${action}" class="filters" aria-label="Find calls">
${field('Direction', choice('direction', query.direction, directionChoices), 'direction')}
${field('Status', choice('status', query.status, statusChoices), 'status')}
${field('Number', html`<input id="phone_number" name="phone_number" type="tel" placeholder="+14155550100" value="${query.phone_number ?? ''}">`, 'phone_number')}
${field('From', html`<input id="from" name="from" type="date" value="${query.from ?? ''}">`, 'from')}
${field('To', html`<input id="to" name="to" type="date" value="${query.to ?? ''}">`, 'to')}
<div><button type="submit">Find</button></div>
</form>`;

const callRows = (base: string, calls: CallView[]): Html =>
  html`<div class="table-wrap"><table><thead><tr><th scope="col">Made</th><th scope="col">Direction</th><th scope="col">From</th><th scope="col">To</th><th scope="col" class="number">Duration</th><th scope="col">Status</th></tr></thead><tbody>${calls.map(
    (call) =>
      html`<tr data-call="${call.call_sid ?? call.id}"><td class="when"><a href="${base}/console/calls/${call.call_sid ?? call.id}">${when(call.created_at)}</a></td><td>${call.direction}</td><td>${call.from}</td><td>${call.to}</td><td class="number">${
        call.duration_seconds === null ? '' : minutesAndSeconds(call.duration_seconds)
      }</td><td>${callStatusBadges(call)}</td></tr>`,
  )}</tbody></table></div>`;

export const consoleCalls = async (
  request: AppRequest,
  caller: Caller,
  query: CallSearchQuery,
): Promise<ConsoleContent> => {
  const { base, orgId } = request;
  const action = `${base}/console/calls`;
  const offset = query.continuation_token ?? 0;
  const list = await orNotPermitted(async () => {
    // A role granted no call reads an empty organization otherwise.
    if (!holdsAnyGrantOf(caller, 'Call:GetCall')) throw new ForbiddenError('Missing required permission Call:GetCall.');
    const listed = await listCalls(orgId, caller, {
      direction: query.direction,
      status: query.status ? [query.status] : undefined,
      phone_number: query.phone_number,
      created_after: query.from ? `${query.from}T00:00:00.000Z` : undefined,
      created_before: query.to ? `${query.to}T23:59:59.999Z` : undefined,
      limit: query.limit ?? pageSize,
      continuation_token: offset,
    });
    return html`${
      listed.calls.length === 0
        ? html`<p role="status">No call matches.</p>`
        : html`<p role="status" class="muted">${listed.calls.length} call${listed.calls.length === 1 ? '' : 's'} on this page, newest first.</p>${callRows(base, listed.calls)}`
    }${pager(action, query, offset, listed.has_more ? listed.continuation_token : null)}`;
  });
  return {
    section: 'calls',
    heading: 'Calls',
    wide: true,
    content: html`${searchForm(action, query)}${list}`,
  };
};

/** The call's lanes to scale (the stage timeline's drawing), then every entry in words. */
const timelineSection = (entries: TimelineEntry[]): Html => {
  if (entries.length === 0) return html`<p class="muted">Nothing on this call's timeline yet.</p>`;
  const { totalMs, lanes } = callLanes(entries);
  return html`<p id="call-lanes" class="muted">Each side's speech and what happened between, from the start of the call's media (the recordings' 0) to ${entrySpan({ start_ms: totalMs, end_ms: totalMs })}.</p>
<ol class="timeline lanes" aria-labelledby="call-lanes">${lanes.map(
    (lane) =>
      html`<li><span class="label">${lane.label}</span><span class="track" aria-hidden="true">${lane.marks.map(
        (mark) =>
          html`<span class="bar entry-${mark.kind}" title="${mark.title}" style="${new Html(
            `left:${percentOf(mark.from, totalMs)};width:${percentOf(mark.to - mark.from, totalMs)}`,
          )}"></span>`,
      )}</span><span class="value">${lane.marks.length} ${lane.marks.length === 1 ? 'entry' : 'entries'}</span></li>`,
  )}</ol>
<details><summary>Every entry, in time order</summary><div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Said or done</th></tr></thead><tbody>${entries.map(
    (entry) =>
      html`<tr><td class="when">${entrySpan(entry)}</td><td>${timelineKindWords[entry.kind]}</td><td>${entry.text ?? ''}</td></tr>`,
  )}</tbody></table></div></details>`;
};

/** Both channels to play, on the recording's presigned URLs (15 minutes), with what they hold; or why there is none. */
const recordingSection = async (
  orgId: string,
  caller: Caller,
  call: CallView,
): Promise<{ section: Html; mediaOrigins: string[] }> => {
  if (!call.recording || call.call_sid === null) {
    return {
      section: html`<p class="muted">No recording: ${
        call.status === 'in-progress'
          ? 'the call is under way; its channels are stored once it ends.'
          : 'recording was off, or nothing was said.'
      }</p>`,
      mediaOrigins: [],
    };
  }
  try {
    const recording = await getCallRecording(orgId, caller, call.call_sid);
    const channel = (id: string, label: string, url: string, facts: { sample_rate: number; size_bytes: number }) =>
      html`<figure class="channel"><figcaption id="${id}">${label} <span class="muted">${(facts.sample_rate / 1000).toLocaleString('en-US')} kHz, ${Math.ceil(facts.size_bytes / 1024).toLocaleString('en-US')} KiB</span></figcaption><audio controls preload="none" src="${url}" aria-labelledby="${id}"></audio></figure>`;
    const { metadata } = recording;
    return {
      section: html`<p class="muted">${minutesAndSeconds(metadata.duration_seconds)} from ${when(metadata.started_at)}, two WAV channels; the links last until ${when(recording.expires_at)}.</p>
${channel('channel-inbound', 'The caller (inbound)', recording.inbound_url, metadata.inbound)}
${channel('channel-outbound', 'The agent (outbound)', recording.outbound_url, metadata.outbound)}`,
      mediaOrigins: [...new Set([recording.inbound_url, recording.outbound_url].map((url) => new URL(url).origin))],
    };
  } catch (error) {
    if (!(error instanceof ForbiddenError || error instanceof NotFoundError)) throw error;
    return { section: html`<p class="muted">Your role may not hear this call's recording.</p>`, mediaOrigins: [] };
  }
};

const summaryItem = (term: string, value: Html | string | null | undefined): Html =>
  value === null || value === undefined || value === '' ? html`` : html`<div><dt>${term}</dt><dd>${value}</dd></div>`;

/** A call's page; `mediaOrigins` are where its recording plays from (the page's policy must allow them). */
export const consoleCall = async (
  request: AppRequest,
  caller: Caller,
  reference: string,
): Promise<ConsoleContent & { mediaOrigins: string[] }> => {
  const { base, orgId } = request;
  const call = await getCallDetails(orgId, caller, reference);
  const [timeline, recording, services] = await Promise.all([
    getCallTimeline(orgId, caller, reference),
    recordingSection(orgId, caller, call),
    serviceNames(orgId, caller, call.service_id ? [call.service_id] : []),
  ]);
  const { transfer } = call;
  return {
    section: 'calls',
    heading: `${call.direction === 'inbound' ? 'Call from' : 'Call to'} ${call.direction === 'inbound' ? call.from : call.to}`,
    wide: true,
    mediaOrigins: recording.mediaOrigins,
    content: html`<dl class="summary">
${summaryItem('Made', when(call.created_at))}
${summaryItem('Status', callStatusBadges(call))}
${summaryItem('From', call.from)}
${summaryItem('To', call.to)}
${summaryItem('Service', call.service_id ? nameOf(services, call.service_id) : null)}
${summaryItem('Answered', call.started_at ? when(call.started_at) : null)}
${summaryItem('Answered by', call.answered_by ? call.answered_by.replaceAll('_', ' ') : null)}
${summaryItem('Duration', call.duration_seconds === null ? null : minutesAndSeconds(call.duration_seconds))}
${summaryItem('Reason', call.reason)}
${summaryItem('Voicemail left', call.voicemail_left_at ? when(call.voicemail_left_at) : null)}
</dl>
${call.goal ? html`<p><strong>Goal:</strong> ${call.goal}</p>` : ''}
${transfer ? html`<p class="event operator"><strong>Transferred</strong> to ${transfer.phone_to} (${transfer.mode}), asked by ${transfer.requested_by === 'agent' ? 'the agent' : 'a caller of the API'} ${when(transfer.requested_at)}${transfer.summary ? html`: ${transfer.summary}` : ''}</p>` : ''}
${call.error ? html`<p class="event"><strong>Failed</strong>: ${call.error.message}</p>` : ''}
${call.conversation_id ? html`<p><a href="${base}/console/conversations/${call.conversation_id}">The conversation</a></p>` : ''}
<section aria-labelledby="timeline-heading"><h2 id="timeline-heading">Timeline</h2>${timelineSection(timeline.entries)}</section>
<section aria-labelledby="recording-heading"><h2 id="recording-heading">Recording</h2>${recording.section}</section>`,
  };
};
