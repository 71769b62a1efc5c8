import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../infra/local/ports';
import { harness } from '../support/client';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');

/** The README's walkthrough: its `sh` blocks between the two markers, in order. */
const walkthroughBlocks = async (): Promise<string[]> => {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const section = /<!-- walkthrough:start -->([\s\S]*?)<!-- walkthrough:end -->/.exec(readme)?.[1] ?? '';
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
};

describe('README walkthrough', () => {
  it('runs every block as printed: agent, tool, state machine, service, streamed conversation, webhook, gated simulation', async () => {
    // Prepare: this run's platform stands in for the first block's `npm start`, its credentials
    // for `.data/credentials.json`, and a free port for the receiver's 4000; nothing else changes.
    const [start, ...blocks] = await walkthroughBlocks();
    expect(start?.trim()).toBe('npm start -- --in-memory');
    expect(blocks).toHaveLength(11);
    const dir = await mkdtemp(join(tmpdir(), 'walkthrough-'));
    const { baseUrl, credentials } = harness();
    const credentialsFile = join(dir, 'credentials.json');
    await writeFile(credentialsFile, JSON.stringify({ ...credentials, base_url: baseUrl }));
    const hookPort = await freePort();
    const script = blocks
      .join('\n')
      .replace('C=.data/credentials.json', `C=${credentialsFile}`)
      .replace('HOOK_PORT=4000', `HOOK_PORT=${hookPort}`);
    // The receiver runs in the background (npx, tsx, node): stop all of it once the blocks ran.
    const stopReceiver = () => run('pkill', ['-f', `examples/webhook-receiver.ts ${hookPort}`]).catch(() => undefined);
    expect(script).toContain(`C=${credentialsFile}`);

    try {
      // Act
      const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', script], {
        cwd: root,
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
      });

      // Assess
      const lines = stdout.split('\n');
      // The agent's version, and the opening streamed piece by piece.
      expect(lines).toContain('{"type":"conversation-created","message":null}');
      expect(lines.filter((line) => line.startsWith('{"type":"new-message"')).length).toBeGreaterThan(3);
      expect(lines).toContain('{"type":"interaction-complete","message":null}');
      // The tool ran inside the conversation, with what the user said.
      const toolCall = lines.find((line) => line.includes('"tool-call-ended"'));
      expect(JSON.parse(toolCall ?? '{}')).toMatchObject({
        input_parameters: { name: 'Ada says goodbye' },
        result: 'Hello, Ada says goodbye!',
      });
      // Every webhook delivery verified with the destination's secret, none rejected.
      expect(lines).toContain('verified conversation-post-processing-complete');
      expect(stdout).not.toContain('rejected');
      // The gate passed, and wrote its report.
      expect(stdout).toMatch(/pass rate 100\.0% meets the required 90\.0%/);
    } finally {
      await stopReceiver();
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
