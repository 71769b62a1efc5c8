import { measureAnalytics, printAnalyticsFigures } from './analytics';
import { createService } from './api-client';
import { measureConversations, printConversationFigures } from './conversations';
import { measureCost, printCostFigures } from './cost';
import { writeCostSection } from './cost-readme';
import { measureMatching, printMatchingFigures } from './dynamic-behaviors';
import { measureLambdaBundles, printBundleTable } from './lambda-bundles';
import { type LatencyFigures, printLatencyTargets } from './latency-targets';
import { measureOverhead, printOverheadFigures } from './overhead';
import { measurePeer, printPeerFigures } from './peer';
import { measureRealtime, printRealtimeFigures } from './realtime';
import { measureScale, printScaleFigures } from './scale';
import { measureSimulations, printSimulationFigures } from './simulations';
import { measureTools, printToolFigures } from './tools';
import { measureVoice, printVoiceFigures } from './voice';

/** The README being rewritten from the cost figures, when asked. */
let writingReadme: Promise<void> | undefined;

/** What the latency table at the end reads, kept as its sections ran. */
const latency: LatencyFigures = {};

/** A section: its title, then its figures; one with targets says whether they are met. */
const section =
  <F>(
    title: string,
    measure: () => Promise<F>,
    print: (figures: F) => unknown,
    verdict?: [string, string],
    keep?: (figures: F) => void,
  ) =>
  async () => {
    console.log(`${title}\n`);
    const figures = await measure();
    keep?.(figures);
    const met = print(figures);
    if (verdict) console.log(`\n${met ? verdict[0] : verdict[1]}`);
  };

/**
 * `npm run bench`: measures the targets that tests must not time. Figures are printed, not asserted.
 * `npm run bench -- bundles conversations` runs only the named sections, in this order; `--write-readme`
 * rewrites the README's "What it costs" from the cost section's figures.
 */
const sections: Record<string, () => Promise<void>> = {
  bundles: section(
    'Lambda bundles (target: what a cold start loads < 1 MB minified, cold init < 250 ms)',
    () =>
      measureLambdaBundles({
        importCosts: flags.includes('--imports'),
        only:
          flags
            .find((flag) => flag.startsWith('--function='))
            ?.slice('--function='.length)
            .split(',') ?? [],
      }),
    printBundleTable,
    ['All bundle targets met.', 'Some bundle targets missed (see above).'],
  ),
  overhead: section(
    'Request overhead against the deployed bundles (targets at p50 over the bare DynamoDB calls: at most 1.3× over HTTP through the --bundled gateway, 1.2× for the function alone; median of 5 runs)',
    () => measureOverhead({ profileDir: flags.includes('--profile') ? '.data/profiles' : undefined }),
    printOverheadFigures,
    ['The overhead target is met.', 'The overhead target is missed (see above).'],
  ),
  'dynamic-behaviors': section(
    'Dynamic behavior matching (target: 500 triggers per service add at most 10 ms to a turn)',
    measureMatching,
    printMatchingFigures,
    ['The matching target is met.', 'The matching target is missed (see above).'],
  ),
  conversations: section(
    'Conversations (targets: first new-message within 30 ms of the model producing it, p50; each fragment within 10 ms; zero errors under load)',
    measureConversations,
    printConversationFigures,
    ['All conversation targets met.', 'Some conversation targets missed (see above).'],
    (figures) => {
      latency.conversations = figures;
    },
  ),
  tools: section('Tools (local runtime: a child process per run)', measureTools, printToolFigures),
  peer: section(
    'The peer, side by side (target: ours faster at p50 and p99, first token and whole turn)',
    measurePeer,
    printPeerFigures,
    ['Ours is faster on every figure.', 'Some peer figures are not faster (see above).'],
    (figures) => {
      latency.peer = figures;
    },
  ),
  scale: section(
    'Scale (targets: list latency flat from 1,000 to 100,000 records; no stream fails)',
    () => measureScale(createService),
    printScaleFigures,
    ['The scale targets are met.', 'Some scale targets are missed (see above).'],
  ),
  realtime: section(
    'Live voice sessions over the browser protocol (targets with the built-in engines: end of speech → first audio p50 ≤ 500 ms, p99 ≤ 1,000 ms; barge-in ≤ 300 ms; ≥ 6 sessions at real time; WER on human speech ≤ 0.35)',
    measureRealtime,
    printRealtimeFigures,
    ['All realtime targets met.', 'Some realtime targets missed (see above).'],
  ),
  voice: section(
    'Voice (built-in engines: recognition accuracy and time, synthesis, first audio over HTTP by stage)',
    measureVoice,
    printVoiceFigures,
    undefined,
    (figures) => {
      latency.voice = figures;
    },
  ),
  cost: section(
    'Cost per conversation in AWS (targets: text at most $0.00040, voice at most $0.05; us-east-1 list prices)',
    measureCost,
    printCostFigures,
    ['The cost targets are met.', 'Some cost targets are missed (see above).'],
    // `--write-readme`: the README's "What it costs" is rewritten from these figures.
    (figures) => {
      if (flags.includes('--write-readme')) writingReadme = writeCostSection(figures);
    },
  ),
  analytics: section(
    'Analytics lake (targets at 1,000,000 messages: warm p95 under 1 s for each query; freshness p95 under 60 s)',
    measureAnalytics,
    // It says whether the targets are met itself: its summary line, for scripts, comes last.
    printAnalyticsFigures,
  ),
  simulations: section(
    'Simulations (built-in models: 100 conversations of 5 turns through the simulation queue)',
    measureSimulations,
    printSimulationFigures,
  ),
};

const flags = process.argv.slice(2).filter((argument) => argument.startsWith('--'));
const requested = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
const unknown = requested.filter((name) => !(name in sections));
if (unknown.length > 0) {
  console.error(`Unknown bench section(s): ${unknown.join(', ')}. Sections: ${Object.keys(sections).join(', ')}.`);
  process.exit(2);
}
const selected = Object.keys(sections).filter((name) => requested.length === 0 || requested.includes(name));
for (const [index, name] of selected.entries()) {
  if (index > 0) console.log('');
  await sections[name]?.();
}
if (latency.voice || latency.conversations || latency.peer) {
  console.log('');
  printLatencyTargets(latency);
}
await writingReadme;
