import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cloudAssemblyDir, ensureCloudAssembly } from '../../infra/local/cloud-assembly';
import { assemblyDigest, type ReleaseSnapshot, releaseSnapshotPath, snapshotText } from './template-digest';

/**
 * `npm run release-snapshot`: keeps what the release being shipped deploys (its stateful
 * resources and API paths, `tests/infra/template-digest.ts`) in `tests/infra/release-templates/`,
 * so the next release's upgrade test compares against it. Run it when a release is tagged and
 * deployed, never to make a failing upgrade test pass: that failure says the update would lose
 * data or fail.
 */
await ensureCloudAssembly({}, (line) => console.error(line));
const digests = Object.entries(assemblyDigest(cloudAssemblyDir));
const [first] = digests;
if (!first) throw new Error('the cloud assembly holds no stack');
// Every region deploys the same stack; a region-specific resource would need a digest per stack.
const differing = digests.filter(([, digest]) => JSON.stringify(digest) !== JSON.stringify(first[1]));
if (differing.length > 0)
  throw new Error(
    `the regional stacks differ (${differing.map(([name]) => name).join(', ')}): keep one digest per stack`,
  );
const commit = execFileSync('git', ['describe', '--always', '--dirty'], { encoding: 'utf8' }).trim();
const snapshot: ReleaseSnapshot = { release: commit, stack: first[1] };
writeFileSync(releaseSnapshotPath, snapshotText(snapshot));
console.error(`kept the digest of ${first[0]} (${commit}) in ${releaseSnapshotPath}`);
