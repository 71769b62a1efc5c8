import { parseArgs } from 'node:util';
import { ensureCloudAssembly, parseContext } from './local/cloud-assembly';

/**
 * `npm run synth [-- -c key=value ...]`: `cdk synth --quiet` into cdk.out, skipped when the
 * assembly there was made from the same sources and context (`npm start -- --bundled` reuses it).
 */
const { values } = parseArgs({ options: { context: { type: 'string', short: 'c', multiple: true, default: [] } } });
await ensureCloudAssembly(parseContext(values.context), (line) => console.error(line));
