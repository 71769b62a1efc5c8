import { createService } from './api-client';
import { measureConversations, printConversationFigures } from './conversations';
import { measureMatching, printMatchingFigures } from './dynamic-behaviors';
import { measureLambdaBundles, printBundleTable } from './lambda-bundles';
import { measureOverhead, printOverheadFigures } from './overhead';
import { measurePeer, printPeerFigures } from './peer';
import { measureScale, printScaleFigures } from './scale';
import { measureSimulations, printSimulationFigures } from './simulations';
import { measureTools, printToolFigures } from './tools';
import { measureVoice, printVoiceFigures } from './voice';

/**
 * `npm run bench`: measures the targets that tests must not time. Figures are printed, not asserted.
 * `npm run bench -- bundles conversations` runs only the named sections, in this order.
 */
const sections: Record<string, () => Promise<void>> = {
  bundles: async () => {
    console.log('Lambda bundles (target: what a cold start loads < 1 MB minified, cold init < 250 ms)\n');
    const bundlesOk = printBundleTable(await measureLambdaBundles());
    console.log(bundlesOk ? '\nAll bundle targets met.' : '\nSome bundle targets missed (see above).');
  },
  overhead: async () => {
    console.log('Request overhead (target: get and list operations at most 1.2× the bare DynamoDB calls, p50)\n');
    const overheadOk = printOverheadFigures(await measureOverhead());
    console.log(overheadOk ? '\nThe overhead target is met.' : '\nThe overhead target is missed (see above).');
  },
  'dynamic-behaviors': async () => {
    console.log('Dynamic behavior matching (target: 500 triggers per service add at most 10 ms to a turn)\n');
    const matchingOk = printMatchingFigures(await measureMatching());
    console.log(matchingOk ? '\nThe matching target is met.' : '\nThe matching target is missed (see above).');
  },
  conversations: async () => {
    console.log(
      'Conversations (targets: first new-message within 30 ms of the model producing it, p50; each fragment within 10 ms; zero errors under load)\n',
    );
    const conversationsOk = printConversationFigures(await measureConversations());
    console.log(
      conversationsOk ? '\nAll conversation targets met.' : '\nSome conversation targets missed (see above).',
    );
  },
  tools: async () => {
    console.log('Tools (local runtime: a child process per run)\n');
    printToolFigures(await measureTools());
  },
  peer: async () => {
    console.log('The peer, side by side (target: ours faster at p50 and p99, first token and whole turn)\n');
    const peerOk = printPeerFigures(await measurePeer());
    console.log(peerOk ? '\nOurs is faster on every figure.' : '\nSome peer figures are not faster (see above).');
  },
  scale: async () => {
    console.log('Scale (targets: list latency flat from 1,000 to 100,000 records; no stream fails)\n');
    const scaleOk = printScaleFigures(await measureScale(createService));
    console.log(scaleOk ? '\nThe scale targets are met.' : '\nSome scale targets are missed (see above).');
  },
  voice: async () => {
    console.log('Voice (built-in engines; real-time factor = processing time / audio duration)\n');
    printVoiceFigures(await measureVoice());
  },
  simulations: async () => {
    console.log('Simulations (built-in models: 100 conversations of 5 turns through the simulation queue)\n');
    printSimulationFigures(await measureSimulations());
  },
};

const requested = process.argv.slice(2);
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
