import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { openSecret, sealSecret } from './sealed-secrets';

describe('sealed secrets (local key file)', () => {
  let keyFile: string;

  beforeAll(async () => {
    keyFile = join(await mkdtemp(join(tmpdir(), 'sealing-')), 'sealing-key');
    vi.stubEnv('SEALING_KEY_SECRET_ARN', '');
    vi.stubEnv('SEALING_KEY_FILE', keyFile);
  });

  it('opens what it sealed for the same record, and creates its key file 0600', async () => {
    // Act
    const sealed = await sealSecret('whsec_abc', 'webhook-destination/acme/1');

    // Assess
    expect(sealed).not.toContain('whsec_abc');
    await expect(openSecret(sealed, 'webhook-destination/acme/1')).resolves.toBe('whsec_abc');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
  });

  it('refuses a sealed value moved to another record or altered', async () => {
    // Prepare
    const sealed = await sealSecret('whsec_abc', 'webhook-destination/acme/1');
    const [version, iv, tag, data] = sealed.split('.') as [string, string, string, string];
    const altered = [version, iv, tag, `${data.slice(0, -2)}AA`].join('.');

    // Act / Assess
    await expect(openSecret(sealed, 'webhook-destination/other/1')).rejects.toThrow();
    await expect(openSecret(altered, 'webhook-destination/acme/1')).rejects.toThrow();
  });
});
