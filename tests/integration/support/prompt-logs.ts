import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { apiUrl } from './client';
import type { Session } from './identity';

const run = promisify(execFile);

/**
 * `GET /admin/get_prompt_logs/` of the session's organization under `prefix` (relative to the
 * organization's logs): the zip's entries, unpacked by the standard `unzip`, by name.
 */
export const downloadPromptLogs = async (
  session: Session,
  prefix: string,
): Promise<{ status: number; entries: Map<string, string> }> => {
  const response = await fetch(apiUrl(`/v1/${session.orgId}/admin/get_prompt_logs/`, { prompt_log_prefix: prefix }), {
    headers: { authorization: `Bearer ${session.token}` },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const entries = new Map<string, string>();
  if (response.status !== 200) return { status: response.status, entries };
  expect(response.headers.get('content-type')).toBe('application/zip');
  const dir = await mkdtemp(join(tmpdir(), 'prompt-logs-'));
  try {
    await writeFile(join(dir, 'logs.zip'), bytes);
    await run('unzip', ['-tq', join(dir, 'logs.zip')]);
    const names = (await run('unzip', ['-Z1', join(dir, 'logs.zip')])).stdout.split('\n').filter(Boolean);
    await run('unzip', ['-q', join(dir, 'logs.zip'), '-d', join(dir, 'out')]);
    for (const name of names) entries.set(name, await readFile(join(dir, 'out', name), 'utf8'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { status: response.status, entries };
};
