import { measureLambdaBundles, printBundleTable } from './lambda-bundles';

/** `npm run bench`: measures the targets that tests must not time. */
console.log('Lambda bundles (target: < 1 MB minified, cold init < 250 ms)\n');
const bundlesOk = printBundleTable(await measureLambdaBundles());
console.log(bundlesOk ? '\nAll bundle targets met.' : '\nSome bundle targets missed (see above).');
