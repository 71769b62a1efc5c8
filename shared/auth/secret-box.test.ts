import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { openSecret, sealSecret } from './secret-box';

describe('secret-box (local signing-key file)', () => {
  let keyFile: string;

  beforeAll(async () => {
    keyFile = join(await mkdtemp(join(tmpdir(), 'secret-box-')), 'signing-key.json');
    vi.stubEnv('SIGNING_KEY_SECRET_ARN', '');
    vi.stubEnv('SIGNING_KEY_FILE', keyFile);
  });

  it('opens what it sealed for the same context, keyed from a 0600 key file', async () => {
    // Act
    const sealed = await sealSecret('webhook-destination/acme/1', 'whsec_abc');

    // Assess
    expect(sealed).not.toContain('whsec_abc');
    await expect(openSecret('webhook-destination/acme/1', sealed)).resolves.toBe('whsec_abc');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
  });

  it('refuses a sealed value moved to another context or altered', async () => {
    // Prepare
    const sealed = await sealSecret('webhook-destination/acme/1', 'whsec_abc');
    const altered = `${sealed.slice(0, -4)}AAA=`;

    // Act / Assess
    await expect(openSecret('webhook-destination/other/1', sealed)).rejects.toThrow();
    await expect(openSecret('webhook-destination/acme/1', altered)).rejects.toThrow();
  });
});
