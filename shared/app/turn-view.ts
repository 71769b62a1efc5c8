import type { TurnTimings, TurnUsage } from '../../events/stream-events';
import type { OperatorActionRecord } from '../conversation/operator/operator-schemas';
import type { InteractionInsights, MessageInstance, ToolCallLog } from '../conversation/schemas';
import { Html, html } from './html';
import { milliseconds, stageTimeline } from './stage-timeline';

/**
 * One turn of a conversation as the console shows it: the messages, where its time went (drawn to
 * scale), its tokens and cost, the state it reached, its tool calls with their input and output,
 * the dynamic behavior that fired and what the agent had in mind. A part the turn has nothing
 * for is left out; data the turn lacks is said in one line.
 */

/** US dollars, with as many decimals as a small cost needs. */
export const dollars = (usd: number): string =>
  usd === 0 ? '$0.00' : usd >= 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toPrecision(3).replace(/0+$/, '')}`;

export const clockTime = (iso: string): string => iso.slice(11, 19);

/** A turn's figures: tokens in and out, and the cost (or why it is unknown). */
export const usageText = (usage: TurnUsage): string => {
  if (usage.model_calls.length === 0) return 'No model call: no tokens, no cost.';
  const tokens = `${usage.input_tokens.toLocaleString('en-US')} tokens in, ${usage.output_tokens.toLocaleString('en-US')} out${
    usage.model_calls.some((call) => call.tokens_estimated) ? ' (estimated)' : ''
  }`;
  const unpriced = usage.model_calls.filter((call) => call.cost_usd === null).map((call) => call.model);
  // Only the built-in model counts no tokens and charges nothing.
  const builtIn = usage.cost_usd === 0 && usage.model_calls.every((call) => call.tokens_estimated);
  const cost =
    usage.cost_usd === null
      ? `cost unknown: no price for ${[...new Set(unpriced)].join(', ')}`
      : `cost ${dollars(usage.cost_usd)}${builtIn ? ' (the built-in model is free)' : ''}`;
  return `${tokens}, ${cost}`;
};

/** Where `value` falls along `total`, as a CSS percentage (a bar's left or width on a timeline's track). */
export const percentOf = (value: number, total: number): string =>
  `${((100 * value) / Math.max(total, 1)).toFixed(2)}%`;

/** The turn's stages on one axis from the request to the turn's end; each row says its figures in words. */
export const timelineView = (timings: TurnTimings, labelId: string): Html => {
  const timeline = stageTimeline(timings);
  return html`<ol class="timeline" aria-labelledby="${labelId}">${timeline.stages.map(
    (stage) =>
      html`<li><span class="label">${stage.label}</span><span class="track" aria-hidden="true"><span class="bar ${stage.kind}" style="${new Html(
        `left:${percentOf(stage.from, timeline.totalMs)};width:${percentOf(stage.to - stage.from, timeline.totalMs)}`,
      )}"></span></span><span class="value">${stage.value}</span></li>`,
  )}</ol>${
    timeline.unplaced.length > 0
      ? html`<p class="muted">Not placed (stored before stage times were recorded): ${timeline.unplaced.join(', ')}.</p>`
      : ''
  }`;
};

const json = (value: unknown): string => JSON.stringify(value, null, 2);

const toolCallView = (call: ToolCallLog): Html =>
  html`<details><summary><strong>${call.tool_name}</strong> ${call.tool_version} · ran ${milliseconds(call.duration * 1000)}${call.mocked ? ' · mocked' : ''}</summary>
<p class="muted">Input</p><pre>${json(call.input)}</pre>
<p class="muted">Output</p><pre>${call.output ?? '(no output)'}</pre></details>`;

/** Every tool call of the turn: the state transitions', then the model calls'. */
const toolCallsOf = (insights: InteractionInsights): ToolCallLog[] => [
  ...insights.state_transition_logs.flatMap((log) => log.tool_call_logs.flat()),
  ...insights.select_next_action_tool_call_logs.flat(),
  ...insights.engage_user_tool_call_logs.flat(),
];

export interface TurnView {
  id: string;
  index: number;
  createdAt: string;
  messages: MessageInstance[];
  /** Undefined when the caller may not read the conversation's insights. */
  insights?: InteractionInsights;
  /** Who answered instead of the agent, when an operator did. */
  operatorName?: string;
  /** Where a voice message's audio plays from. */
  audioUrl: (messageId: string) => string;
  behaviorName: (setId: string) => string;
}

const bubble = (message: MessageInstance, audioUrl: (messageId: string) => string): Html => {
  const side = message.message_type === 'user-message' || message.message_type === 'external-event' ? 'user' : 'agent';
  const sender = message.from_operator ? `${message.sender} (operator)` : message.sender;
  return html`<div class="bubble ${side}"><span class="sender">${sender}${message.message_type === 'external-event' ? ' · external event' : ''}</span>${message.message}${
    message.format === 'voice'
      ? html`<audio controls preload="none" src="${audioUrl(message.id)}" aria-label="The audio of ${sender}'s message"></audio>`
      : ''
  }</div>`;
};

const stateView = (insights: InteractionInsights): Html => {
  const path = insights.state_transition_logs.map((log) => log.next_state);
  const from = insights.state_transition_logs[0]?.previous_state;
  return html`<p>State reached: <strong>${insights.current_state_name}</strong>${
    from ? html` <span class="muted">(${[from, ...path].join(' → ')})</span>` : ''
  }</p>`;
};

/** The turn's OpenTelemetry trace, to look up in the deployment's tracing tool (docs/observability.md). */
export const traceView = (timings: TurnTimings): Html | undefined =>
  timings.trace_id ? html`<p class="muted">Trace <code class="trace-id">${timings.trace_id}</code></p>` : undefined;

const insightsView = (turn: TurnView, insights: InteractionInsights): Html => {
  const headingId = `turn-${turn.index}-stages`;
  const toolCalls = toolCallsOf(insights);
  const behavior = insights.triggered_dynamic_behavior_set_version_info;
  return html`${stateView(insights)}
${
  insights.timings
    ? html`<p id="${headingId}" class="muted">Where the turn's time went, from the request</p>${timelineView(insights.timings, headingId)}${traceView(insights.timings)}`
    : html`<p class="muted">Timings: not recorded (the turn was stored before turns were measured).</p>`
}
<p>${insights.usage ? usageText(insights.usage) : html`<span class="muted">Tokens and cost: not recorded for this turn.</span>`}</p>
${behavior ? html`<p>Dynamic behavior fired: <strong>${turn.behaviorName(behavior[0])}</strong> (version ${behavior[1]})</p>` : ''}
${toolCalls.length > 0 ? html`<h4>Tool calls</h4>${toolCalls.map(toolCallView)}` : ''}
${
  insights.reflections.length > 0 || insights.working_memory.length > 0
    ? html`<details><summary>What the agent had in mind</summary>${insights.reflections.map((reflection) => html`<p>${reflection}</p>`)}${
        insights.working_memory.length > 0
          ? html`<ul>${insights.working_memory.map((entry) => html`<li>${entry.content} <span class="muted">${entry.context}</span></li>`)}</ul>`
          : ''
      }</details>`
    : ''
}`;
};

export const turnView = (turn: TurnView): Html => {
  const headingId = `turn-${turn.index}`;
  const voice = turn.messages.some((message) => message.format === 'voice');
  return html`<article class="turn${turn.operatorName ? ' operated' : ''}" aria-labelledby="${headingId}">
<h3 id="${headingId}">${turn.index === 0 ? 'Opening' : `Turn ${turn.index}`} <span class="muted">${clockTime(turn.createdAt)}</span>${
    voice ? html` <span class="badge">voice</span>` : ''
  }${turn.operatorName ? html` <span class="badge operator">answered by ${turn.operatorName}</span>` : ''}</h3>
${
  turn.messages.length > 0
    ? html`<div class="bubbles">${turn.messages.map((message) => bubble(message, turn.audioUrl))}</div>`
    : html`<p class="muted">This turn's messages are not shown to your role.</p>`
}
${turn.insights ? insightsView(turn, turn.insights) : ''}
</article>`;
};

const actionWords: Record<OperatorActionRecord['action'], string> = {
  escalated: 'Escalated',
  'escalation-expired': 'Escalation expired unclaimed',
  'took-over': 'Taken over',
  'sent-message': 'Operator message',
  'sent-guidance': 'Guidance to the agent',
  'handed-back': 'Handed back to the agent',
  transferred: 'Call transferred to a person',
};

/** An operator action between turns: an escalation, a takeover, guidance, a handback. */
export const operatorEventView = (action: Omit<OperatorActionRecord, 'conversation_id'>): Html => {
  const details = [
    action.reason,
    action.triggered_by ? `asked by the ${action.triggered_by}` : undefined,
    action.outcome,
    action.text,
  ].filter((part): part is string => Boolean(part));
  return html`<p class="event${action.action === 'escalated' ? '' : ' operator'}"><strong>${actionWords[action.action]}</strong> by ${action.actor_name} <span class="muted">${clockTime(action.at)}</span>${
    details.length > 0 ? html`: ${details.join(' · ')}` : ''
  }</p>`;
};
