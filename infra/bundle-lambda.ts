import { bundleLambda } from './bundling';

/** `tsx infra/bundle-lambda.ts <entry> <outDir>`: the CDK's local bundling step (CDK bundling hooks are synchronous). */
const [entry, outDir] = process.argv.slice(2);
if (!entry || !outDir) {
  console.error('usage: bundle-lambda <entry relative to the repository root> <output directory>');
  process.exit(2);
}
await bundleLambda(entry, outDir);
