import type { Caller } from '../kernel/caller';
import { listServices } from '../service/services';
import type { TurnComparison } from '../simulation/backtest-schemas';
import { getSimulationBacktest, recentBacktests } from '../simulation/backtests';
import { maxForkAlternatives, type SessionTurn } from '../simulation/session-schemas';
import { listSessionTurns } from '../simulation/session-turns';
import { getSessionTree, getSimulationSession, recentSessions } from '../simulation/sessions';
import { type Html, html } from './html';
import type { AppRequest } from './layout';
import { type ConsoleContent, csrfField, orNotPermitted, percentOf, when } from './page-parts';

/*
 * The console's simulation workbench, read as the API's session and backtest operations read
 * them (the same domain functions, as the signed-in caller): a session's fork tree with its
 * branches side by side, each stepped from its column and forked at any of its turns; a
 * backtest's conversations, the most diverged first, each with its turns compared.
 */

/** Branches shown side by side: a tree's first ones, in creation order. */
const shownBranches = 8;
/** Sessions and backtests listed on the simulations page. */
const listed = 10;

const styles = html`<style>
.branches{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(17rem,1fr);gap:1rem;overflow-x:auto;align-items:start}
.branch{border:1px solid #ccc;border-radius:8px;padding:.75rem}
.branch.current{border-width:3px}
.branch .turn{margin:.5rem 0;padding:.5rem}
.turn.shared{border-style:dashed}
tr.diverged td:first-child{border-left:6px solid #b00020}
.state{font-size:.875rem}
</style>`;

const bubbleOf = (turn: SessionTurn): Html =>
  html`${turn.user_message === null ? '' : html`<div class="bubble user"><span class="sender">Caller</span>${turn.user_message}</div>`}<div class="bubble agent"><span class="sender">Agent</span>${turn.agent_message}</div>`;

const turnCard = (turn: SessionTurn, shared: boolean): Html =>
  html`<div class="turn${shared ? ' shared' : ''}" data-interaction="${turn.interaction_id}"><div class="bubbles">${bubbleOf(turn)}</div>
<p class="state muted">${turn.state_path.join(' → ')}${turn.tool_calls.length > 0 ? ` · tools: ${turn.tool_calls.map((call) => `${call.tool_name}${call.mocked ? ' (mocked)' : ''}`).join(', ')}` : ''}${shared ? ' · shared with the branch it was forked from' : ''}</p></div>`;

/** The simulations page's part: start a session or a backtest, and the latest of each. */
export const simulationWorkbench = async (request: AppRequest, caller: Caller): Promise<Html> => {
  const { orgId, base } = request;
  const [services, sessions, backtests] = await Promise.all([
    listServices(orgId, caller, { tags: [], sortBy: [], limit: 50, continuationToken: 0 })
      .then((found) => found.services)
      .catch(() => []),
    recentSessions(orgId, caller, listed).catch(() => []),
    recentBacktests(orgId, caller, listed).catch(() => []),
  ]);
  const serviceOptions = html`${services.map((service) => html`<option value="${service.id}">${service.name}</option>`)}`;
  return html`${styles}<h2>Sessions</h2>
<p class="muted">A simulated conversation taken a turn at a time, forked at any turn into alternatives.</p>
<form method="post" action="${base}/console/simulations/sessions">${csrfField(request)}
<label for="session-service">Service</label><select id="session-service" name="service_id">${serviceOptions}</select>
<label for="session-set">Version set</label><input id="session-set" name="version_set_name" value="release">
<details><summary>Or from a real conversation</summary>
<label for="session-from">Conversation</label><input id="session-from" name="from_conversation_id" pattern="[a-f0-9]{24}">
<label for="session-at">After interaction</label><input id="session-at" name="at_interaction_id" pattern="[a-f0-9]{24}">
</details><button type="submit">Start a session</button></form>
${
  sessions.length === 0
    ? html`<p class="muted">No session yet.</p>`
    : html`<ul>${sessions.map(
        (session) =>
          html`<li><a href="${base}/console/simulations/sessions/${session.id}">${when(session.created_at)}</a> <span class="muted">${session.status} · ${session.turn_count} turns${session.parent_id ? ' · fork' : ''}</span></li>`,
      )}</ul>`
}
<h2>Backtests</h2>
<p class="muted">A candidate version set replays the user messages of real conversations; each turn is compared with the original.</p>
<form method="post" action="${base}/console/simulations/backtests">${csrfField(request)}
<label for="backtest-service">Service</label><select id="backtest-service" name="service_id">${serviceOptions}</select>
<label for="backtest-set">Candidate version set</label><input id="backtest-set" name="candidate_version_set" value="edge" required>
<label for="backtest-conversations">Conversations (ids, one per line)</label><textarea id="backtest-conversations" name="conversation_ids"></textarea>
<label for="backtest-since">Or those since</label><input id="backtest-since" name="since" type="date">
<button type="submit">Start a backtest</button></form>
${
  backtests.length === 0
    ? html`<p class="muted">No backtest yet.</p>`
    : html`<ul>${backtests.map(
        (backtest) =>
          html`<li><a href="${base}/console/simulations/backtests/${backtest.id}">${when(backtest.created_at)}</a> <span class="muted">'${backtest.candidate_version_set}' · ${backtest.status} · ${backtest.finished_conversations} of ${backtest.source_conversation_ids.length} conversations${backtest.summary ? ` · ${percentOf(backtest.summary.divergence_rate)} diverged` : ''}</span></li>`,
      )}</ul>`
}`;
};

/** One branch's column: its turns (those it shares with its parent muted), then its step form. */
const branchColumn = (
  request: AppRequest,
  branch: Awaited<ReturnType<typeof getSimulationSession>>,
  parentTurns: Set<string>,
  current: boolean,
): Html =>
  html`<section class="branch${current ? ' current' : ''}" aria-label="Branch ${branch.id}" data-session="${branch.id}">
<h3><a href="${request.base}/console/simulations/sessions/${branch.id}">${branch.parent_id ? 'Fork' : 'Session'} ${branch.id.slice(-6)}</a></h3>
<p class="muted">${branch.status} · ${branch.turn_count} turns</p>
${branch.turns.map((turn) => turnCard(turn, parentTurns.has(turn.interaction_id)))}
${
  branch.status === 'active'
    ? html`<form method="post" action="${request.base}/console/simulations/sessions/${branch.id}/step">${csrfField(request)}
<label for="say-${branch.id}">Caller says</label><textarea id="say-${branch.id}" name="caller_text" placeholder="Empty: the persona's simulated user speaks"></textarea>
<button type="submit">Step</button></form>`
    : html`<p class="muted">Finished: fork it to go on.</p>`
}</section>`;

/** A session's page: its tree's branches side by side, and the form that forks the session at a turn. */
export const consoleSimulationSession = async (
  request: AppRequest,
  caller: Caller,
  sessionId: string,
): Promise<ConsoleContent> => {
  const { orgId, base } = request;
  const session = await getSimulationSession(orgId, caller, sessionId, listSessionTurns);
  const tree = await getSessionTree(orgId, caller, sessionId);
  const others = tree.sessions.filter((branch) => branch.id !== sessionId).slice(0, shownBranches - 1);
  const branches = [
    session,
    ...(await Promise.all(others.map((branch) => getSimulationSession(orgId, caller, branch.id, listSessionTurns)))),
  ].sort((a, b) => a.id.localeCompare(b.id));
  const turnsOf = new Map(
    branches.map((branch) => [branch.id, new Set(branch.turns.map((turn) => turn.interaction_id))]),
  );
  return {
    section: 'simulations',
    heading: `Simulation session ${sessionId.slice(-6)}`,
    wide: true,
    content: html`${styles}<dl class="summary">
<div><dt>Version set</dt><dd>${session.version_set_name} (agent v${session.agent_version_info[1]}, state machine v${session.service_hierarchical_state_machine_version_info[1]})</dd></div>
<div><dt>Status</dt><dd>${session.status}</dd></div>
<div><dt>Expires</dt><dd>${when(session.expires_at)}</dd></div>
${session.from_conversation ? html`<div><dt>From conversation</dt><dd><a href="${base}/console/conversations/${session.from_conversation.conversation_id}">${session.from_conversation.conversation_id}</a></dd></div>` : ''}
<div><dt>Tree</dt><dd>${tree.sessions.length} sessions${tree.sessions.length > shownBranches ? html`, the first ${shownBranches} shown` : ''}</dd></div>
</dl>
<h2>Branches</h2>
<div class="branches">${branches.map((branch) =>
      branchColumn(
        request,
        branch,
        (branch.parent_id && turnsOf.get(branch.parent_id)) || new Set(),
        branch.id === sessionId,
      ),
    )}</div>
<h2>Fork this session</h2>
<form method="post" action="${base}/console/simulations/sessions/${sessionId}/fork">${csrfField(request)}
<label for="fork-at">After turn</label><select id="fork-at" name="at_interaction_id">${session.turns.map(
      (turn, index) =>
        html`<option value="${turn.interaction_id}"${index === session.turns.length - 1 ? html` selected` : ''}>${index}: ${(turn.user_message ?? turn.agent_message).slice(0, 60)}</option>`,
    )}</select>
<label for="fork-alternatives">Alternatives (one caller text per line, at most ${maxForkAlternatives})</label><textarea id="fork-alternatives" name="alternatives" required></textarea>
<button type="submit">Fork</button></form>`,
  };
};

const toolNames = (calls: TurnComparison['candidate']['tool_calls']): string =>
  calls.map((call) => `${call.tool_name}${call.mocked ? ' (not run)' : ''}`).join(', ');

const comparisonRow = (turn: TurnComparison): Html =>
  html`<tr class="${turn.diverged ? 'diverged' : ''}"><td class="number">${turn.index}</td><td>${turn.user_message ?? html`<span class="muted">(opening)</span>`}</td><td>${turn.original.reply ?? ''}</td><td>${turn.candidate.reply ?? html`<span class="muted">(not reached)</span>`}</td><td class="number">${turn.difference.toFixed(2)}${turn.diverged ? html`<br><span class="badge escalated">diverged</span>` : ''}</td><td class="state">${turn.original.state_path.join(' → ')}${turn.state_path_changed ? html`<br><strong>${turn.candidate.state_path.join(' → ')}</strong>` : ''}</td><td>${toolNames(turn.original.tool_calls)}${turn.tool_calls_changed ? html`<br><strong>${toolNames(turn.candidate.tool_calls) || 'none'}</strong>` : ''}</td></tr>`;

/** A backtest's page: its summary, then its conversations by divergence, each with its turns compared. */
export const consoleSimulationBacktest = async (
  request: AppRequest,
  caller: Caller,
  backtestId: string,
): Promise<ConsoleContent> => {
  const backtest = await getSimulationBacktest(request.orgId, caller, backtestId, { limit: 50, continuation_token: 0 });
  const { summary } = backtest;
  return {
    section: 'simulations',
    heading: `Backtest of '${backtest.candidate_version_set}'`,
    wide: true,
    content: html`${styles}<dl class="summary">
<div><dt>Status</dt><dd>${backtest.status}${backtest.reason ? ` (${backtest.reason})` : ''}</dd></div>
<div><dt>Conversations</dt><dd>${backtest.finished_conversations} of ${backtest.total_conversations} replayed</dd></div>
${
  summary
    ? html`<div><dt>Diverged</dt><dd>${summary.diverged} of ${summary.completed} (${percentOf(summary.divergence_rate)})</dd></div>
<div><dt>Turns diverged</dt><dd>${summary.turns_diverged} of ${summary.turns_compared}</dd></div>
<div><dt>Mean difference</dt><dd>${summary.mean_difference.toFixed(3)}</dd></div>`
    : ''
}
</dl>
${
  summary && summary.metric_deltas.length > 0
    ? html`<h2>Metrics</h2><div class="table-wrap"><table><thead><tr><th scope="col">Metric</th><th scope="col" class="number">Original</th><th scope="col" class="number">Candidate</th><th scope="col" class="number">Delta</th><th scope="col" class="number">Changed</th></tr></thead><tbody>${summary.metric_deltas.map(
        (metric) =>
          html`<tr><td>${metric.metric_id}</td><td class="number">${metric.original_mean ?? '–'}</td><td class="number">${metric.candidate_mean ?? '–'}</td><td class="number">${metric.delta ?? '–'}</td><td class="number">${metric.changed} of ${metric.judged}</td></tr>`,
      )}</tbody></table></div>`
    : ''
}
<h2>Conversations, the most diverged first</h2>
${backtest.withheld > 0 ? html`<p class="muted">${backtest.withheld} conversations are left out: your role may not read them.</p>` : ''}
${backtest.results.map(
  (result) =>
    html`<details class="conversation-result" data-conversation="${result.conversation_id}"${result.diverged_turns > 0 ? html` open` : ''}><summary>Conversation ${result.conversation_id} · ${result.status}${result.error ? `: ${result.error}` : ''} · ${result.diverged_turns} of ${result.turns.length} turns diverged${result.first_divergence === null ? '' : ` (first at turn ${result.first_divergence})`} · mean difference ${result.mean_difference.toFixed(2)}</summary>
<p><a href="${request.base}/console/conversations/${result.conversation_id}">Open the original conversation</a></p>
<div class="table-wrap"><table><thead><tr><th scope="col" class="number">Turn</th><th scope="col">User said</th><th scope="col">Original reply</th><th scope="col">Candidate reply</th><th scope="col" class="number">Difference</th><th scope="col">States</th><th scope="col">Tool calls</th></tr></thead><tbody>${result.turns.map(comparisonRow)}</tbody></table></div></details>`,
)}`,
  };
};

/** A section the caller may not read says so instead of failing the page. */
export const simulationWorkbenchSection = (request: AppRequest, caller: Caller): Promise<Html> =>
  orNotPermitted(() => simulationWorkbench(request, caller));
