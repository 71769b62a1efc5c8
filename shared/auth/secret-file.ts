import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The text of a local key file, created with mode 0600 by the first process that needs it: an
 * atomic link of a staged file, so concurrent first users agree on one content.
 */
export const readOrCreateSecretFile = async (path: string, fresh: () => string): Promise<string> => {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dirname(path), { recursive: true });
  const staging = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(staging, fresh(), { mode: 0o600 });
  try {
    await link(staging, path);
  } catch (error) {
    // Another process created it first: theirs is the key.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(staging).catch(() => undefined);
  }
  return readFile(path, 'utf8');
};
