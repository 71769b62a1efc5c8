import { measureConversations, printConversationFigures } from './conversations';
import { measureMatching, printMatchingFigures } from './dynamic-behaviors';
import { measureLambdaBundles, printBundleTable } from './lambda-bundles';
import { measureSimulations, printSimulationFigures } from './simulations';
import { measureTools, printToolFigures } from './tools';

/** `npm run bench`: measures the targets that tests must not time. Figures are printed, not asserted. */
console.log('Lambda bundles (target: < 1 MB minified, cold init < 250 ms)\n');
const bundlesOk = printBundleTable(await measureLambdaBundles());
console.log(bundlesOk ? '\nAll bundle targets met.' : '\nSome bundle targets missed (see above).');

console.log('\nDynamic behavior matching (target: 500 triggers per service add at most 10 ms to a turn)\n');
const matchingOk = printMatchingFigures(await measureMatching());
console.log(matchingOk ? '\nThe matching target is met.' : '\nThe matching target is missed (see above).');

console.log('\nConversations (targets: each fragment within 10 ms of being produced; zero errors under load)\n');
const conversationsOk = printConversationFigures(await measureConversations());
console.log(conversationsOk ? '\nAll conversation targets met.' : '\nSome conversation targets missed (see above).');

console.log('\nTools (local runtime: a child process per run)\n');
printToolFigures(await measureTools());

console.log('\nSimulations (built-in models: 100 conversations of 5 turns through the simulation queue)\n');
printSimulationFigures(await measureSimulations());
