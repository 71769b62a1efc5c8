import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { freePort } from '../../infra/local/ports';
import {
  createService,
  createUser,
  interact,
  mapLimit,
  rootSession,
  type Session,
  startConversation,
} from './api-client';
import { type Percentiles, percentiles } from './conversations';
import { startPlatformProcess } from './platform-process';

/**
 * The peer, side by side: the LangGraph JS dev server (`langgraphjs dev`, in memory) serving a
 * one-node graph whose model is `FakeListChatModel`, against this platform with its built-in
 * model. The peer is installed with npm into `.data/bench-peer/` (git-ignored, kept between
 * runs); it is never a dependency of the product. Interleaved, `rounds` times:
 * - there: create a thread, stream a run (`messages-tuple`), then one more run on the thread;
 * - here: create a conversation (streamed opening), then one interaction.
 * Timed from the first request of each step to the first token / `new-message` and to the end
 * of the turn (the stream's end there, `interaction-complete` here).
 */
const peerDir = resolve('.data/bench-peer');
const peerPackages = [
  '@langchain/langgraph-cli',
  '@langchain/langgraph-api',
  '@langchain/langgraph',
  '@langchain/core',
];
const rounds = 25;
const run = promisify(execFile);

export interface TurnFigures {
  firstToken: Percentiles;
  wholeTurn: Percentiles;
}

export type PeerFigures =
  | { available: false; reason: string }
  | {
      available: true;
      versions: string;
      ours: { opening: TurnFigures; next: TurnFigures };
      peer: { opening: TurnFigures; next: TurnFigures };
    };

const graphSource = `import { FakeListChatModel } from '@langchain/core/utils/testing';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';

const model = new FakeListChatModel({ responses: ['Hello, I am here to help. What can I do for you today?'] });
export const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addEdge(START, 'agent')
  .addEdge('agent', END)
  .compile();
`;

/** Installs the peer once (npm; peers resolved loosely, as the CLI's own ranges conflict) and writes the graph. */
const installPeer = async (): Promise<string> => {
  await mkdir(peerDir, { recursive: true });
  if (!existsSync(join(peerDir, 'node_modules', '.bin', 'langgraphjs'))) {
    await writeFile(
      join(peerDir, 'package.json'),
      JSON.stringify({ name: 'bench-peer', private: true, type: 'module' }),
    );
    await run('npm', ['install', '--no-audit', '--no-fund', '--legacy-peer-deps', ...peerPackages], {
      cwd: peerDir,
      timeout: 600_000,
    });
  }
  await writeFile(join(peerDir, 'graph.mjs'), graphSource);
  await writeFile(
    join(peerDir, 'langgraph.json'),
    JSON.stringify({ node_version: '20', graphs: { agent: './graph.mjs:graph' }, dependencies: ['.'] }),
  );
  const { stdout } = await run('npm', ['ls', '--depth=0', ...peerPackages], { cwd: peerDir });
  return stdout
    .split('\n')
    .filter((line) => line.includes('@langchain/'))
    .map((line) => line.replace(/^[^@]*/, ''))
    .join(', ');
};

const startPeer = async (): Promise<{ baseUrl: string; process: ChildProcess }> => {
  const port = await freePort();
  const child = spawn(
    join(peerDir, 'node_modules', '.bin', 'langgraphjs'),
    ['dev', '--port', String(port), '--host', '127.0.0.1', '--no-browser'],
    { cwd: peerDir, detached: true, stdio: 'ignore' },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ok = await fetch(`${baseUrl}/ok`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return { baseUrl, process: child };
    if (Date.now() > deadline || child.exitCode !== null) {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      throw new Error('the LangGraph dev server did not answer /ok within 90 s');
    }
    await new Promise((done) => setTimeout(done, 250));
  }
};

interface Timed {
  firstToken: number;
  wholeTurn: number;
}

/** One run streamed over SSE: the first `messages` event carrying text, and the stream's end. */
const peerRun = async (baseUrl: string, threadId: string, startedAt: number): Promise<Timed> => {
  const response = await fetch(`${baseUrl}/threads/${threadId}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'I need help with my order' }] },
      stream_mode: ['messages-tuple'],
    }),
  });
  if (!response.ok || !response.body) throw new Error(`peer run: ${response.status}`);
  let firstToken = Number.NaN;
  let buffered = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    const at = performance.now();
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf('\n\n');
      if (!Number.isNaN(firstToken) || !/^event: messages$/m.test(block)) continue;
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
        .join('\n');
      const [message] = JSON.parse(data) as [{ content?: unknown }];
      if (typeof message.content === 'string' && message.content !== '') firstToken = at - startedAt;
    }
  }
  if (Number.isNaN(firstToken)) throw new Error('peer run: no token streamed');
  return { firstToken, wholeTurn: performance.now() - startedAt };
};

const peerConversation = async (baseUrl: string): Promise<{ opening: Timed; next: Timed }> => {
  const startedAt = performance.now();
  const thread = await fetch(`${baseUrl}/threads`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  }).then((response) => response.json() as Promise<{ thread_id: string }>);
  const opening = await peerRun(baseUrl, thread.thread_id, startedAt);
  const next = await peerRun(baseUrl, thread.thread_id, performance.now());
  return { opening, next };
};

const ourTurn = (stream: Awaited<ReturnType<typeof startConversation>>): Timed => {
  const first = stream.events.find(({ event }) => event.type === 'new-message');
  const complete = stream.events.find(({ event }) => event.type === 'interaction-complete');
  if (!first || !complete) throw new Error(`our turn did not complete (status ${stream.status})`);
  return { firstToken: first.at - stream.sentAt, wholeTurn: complete.at - stream.sentAt };
};

const ourConversation = async (user: Session, serviceId: string): Promise<{ opening: Timed; next: Timed }> => {
  const opening = await startConversation(user, serviceId);
  const created = opening.events.find(({ event }) => event.type === 'conversation-created');
  const next = await interact(user, String(created?.event.conversation_id), 'I need help with my order');
  return { opening: ourTurn(opening), next: ourTurn(next) };
};

const figuresOf = (timed: Timed[]): TurnFigures => ({
  firstToken: percentiles(timed.map((turn) => turn.firstToken)),
  wholeTurn: percentiles(timed.map((turn) => turn.wholeTurn)),
});

export const measurePeer = async (): Promise<PeerFigures> => {
  let versions: string;
  let peer: Awaited<ReturnType<typeof startPeer>>;
  try {
    versions = await installPeer();
    peer = await startPeer();
  } catch (error) {
    return { available: false, reason: (error as Error).message.split('\n')[0] as string };
  }
  const platform = await startPlatformProcess({ label: 'peer', env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '0' } });
  try {
    const admin = await rootSession(platform.baseUrl, platform.credentials);
    const serviceId = await createService(admin);
    // Creating conversations is limited to 5 a minute per user: a user per round, plus a warm-up.
    const users = await mapLimit(Array.from({ length: rounds + 1 }), 4, () => createUser(admin, platform.credentials));
    await ourConversation(users[0] as Session, serviceId);
    await peerConversation(peer.baseUrl);
    const ours: { opening: Timed; next: Timed }[] = [];
    const theirs: { opening: Timed; next: Timed }[] = [];
    for (const user of users.slice(1)) {
      theirs.push(await peerConversation(peer.baseUrl));
      ours.push(await ourConversation(user, serviceId));
    }
    return {
      available: true,
      versions,
      ours: { opening: figuresOf(ours.map((c) => c.opening)), next: figuresOf(ours.map((c) => c.next)) },
      peer: { opening: figuresOf(theirs.map((c) => c.opening)), next: figuresOf(theirs.map((c) => c.next)) },
    };
  } finally {
    await platform.stop();
    if (peer.process.pid !== undefined) {
      try {
        process.kill(-peer.process.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  }
};

const row = (label: string, ours: Percentiles, theirs: Percentiles) => {
  const cell = (value: number) => `${value.toFixed(1)} ms`.padStart(10);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`.padStart(7);
  console.log(
    `  ${label.padEnd(34)}${cell(ours.p50)}${cell(theirs.p50)}${ratio(ours.p50, theirs.p50)}   ${cell(ours.p99)}${cell(theirs.p99)}${ratio(ours.p99, theirs.p99)}`,
  );
  return ours.p50 < theirs.p50 && ours.p99 < theirs.p99;
};

/** Prints ours beside the peer; returns whether ours is faster at p50 and p99 on every row. */
export const printPeerFigures = (figures: PeerFigures): boolean => {
  if (!figures.available) {
    console.log(`The LangGraph dev server could not run here: ${figures.reason}`);
    return false;
  }
  console.log(`Peer: ${figures.versions}; ${figures.ours.opening.firstToken.count} rounds, interleaved`);
  console.log(
    `  ${''.padEnd(34)}${'ours p50'.padStart(10)}${'peer p50'.padStart(10)}${'ratio'.padStart(7)}   ${'ours p99'.padStart(10)}${'peer p99'.padStart(10)}${'ratio'.padStart(7)}`,
  );
  const results = [
    row('create + first token', figures.ours.opening.firstToken, figures.peer.opening.firstToken),
    row('create + whole turn', figures.ours.opening.wholeTurn, figures.peer.opening.wholeTurn),
    row('next turn: first token', figures.ours.next.firstToken, figures.peer.next.firstToken),
    row('next turn: whole turn', figures.ours.next.wholeTurn, figures.peer.next.wholeTurn),
  ];
  return results.every(Boolean);
};
