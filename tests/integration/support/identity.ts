import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { api, expectStatus, harness } from './client';

/**
 * Identity fixtures for every area's integration tests: the bootstrap super administrator,
 * a fresh organization per test file, and users of a given role in it.
 */
export interface Session {
  orgId: string;
  userId: string;
  token: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Signs in with an API key, waiting out the sign-in rate limit should a test exhaust its burst. */
export const signIn = async (orgId: string, apiKeyId: string, apiKey: string, userId: string): Promise<Session> => {
  for (let attempt = 0; ; attempt += 1) {
    const response = await api(`/v1/${orgId}/user/signin_with_api_key`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'x-api-key-id': apiKeyId, 'x-user-id': userId },
    });
    if (response.status === 429 && attempt < 3) {
      await sleep(Number(response.headers.get('retry-after') ?? '5') * 1000);
      continue;
    }
    expectStatus('sign in with API key', response, 200);
    return { orgId, userId, token: response.body.id_token as string };
  }
};

/**
 * The root session is shared by every test file through a file beside the platform's state
 * (one sign-in per run, so the sign-in rate limit is never reached); a lock file makes one
 * worker sign in while the others wait for its result.
 */
let rootSessionPromise: Promise<Session> | undefined;

const readCachedSession = async (path: string): Promise<Session | undefined> => {
  try {
    const cached = JSON.parse(await readFile(path, 'utf8')) as Session & { expires_at: string };
    return new Date(cached.expires_at).getTime() - Date.now() > 10 * 60_000 ? cached : undefined;
  } catch {
    return undefined;
  }
};

const signInRoot = async (): Promise<Session> => {
  const { credentials, outboxDir } = harness();
  const cachePath = join(dirname(outboxDir), 'root-session.json');
  const lockPath = `${cachePath}.lock`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const cached = await readCachedSession(cachePath);
    if (cached) return { orgId: cached.orgId, userId: cached.userId, token: cached.token };
    const lock = await open(lockPath, 'wx').catch(() => undefined);
    if (!lock) {
      await sleep(100);
      continue;
    }
    try {
      const session = await signIn(
        credentials.org_id,
        credentials.api_key_id,
        credentials.api_key,
        credentials.user_id,
      );
      const expiresAt = new Date(Date.now() + 55 * 60_000).toISOString();
      await writeFile(cachePath, JSON.stringify({ ...session, expires_at: expiresAt }));
      return session;
    } finally {
      await lock.close();
      await rm(lockPath, { force: true });
    }
  }
  throw new Error('timed out waiting for the root session');
};

/** The bootstrap super administrator of the root organization, signed in once per run. */
export const rootSession = (): Promise<Session> => {
  rootSessionPromise ??= signInRoot().catch((error: unknown) => {
    rootSessionPromise = undefined;
    throw error;
  });
  return rootSessionPromise;
};

/** Headers for acting on another organization with a session of its own organization. */
export const crossOrgHeaders = (session: Session): Record<string, string> => ({ 'x-org-id': session.orgId });

const crc32Table = Array.from({ length: 256 }, (_, index) => {
  let value = index;
  for (let bit = 0; bit < 8; bit += 1) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  return value >>> 0;
});
const crc32 = (bytes: Buffer): number => {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (crc32Table[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
};
const pngChunk = (type: string, data: Buffer): Buffer => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
};

/** A valid grey PNG of the given size. */
export const pngImage = (width: number, height: number): Buffer => {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  for (let row = 0; row < height; row += 1) rows[row * (width + 1)] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(rows)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
};

/** An ICO file holding one PNG image of the given square size. */
export const icoImage = (size: number): Buffer => {
  const png = pngImage(size, size);
  const header = Buffer.alloc(22);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(1, 4);
  header.writeUInt8(size >= 256 ? 0 : size, 6);
  header.writeUInt8(size >= 256 ? 0 : size, 7);
  header.writeUInt16LE(1, 10);
  header.writeUInt16LE(32, 12);
  header.writeUInt32LE(png.length, 14);
  header.writeUInt32LE(22, 18);
  return Buffer.concat([header, png]);
};

/** A valid create-organization body; override any field. */
export const organizationBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  org_name: 'Test organization',
  title: 'A test tenant',
  main_description: 'Created by an integration test.',
  sub_description: 'Disposable.',
  onboarding_instructions: ['# Welcome'],
  user_dimensions: [{ description: 'Role in the company', tags: ['engineer', 'manager'] }],
  logo: pngImage(400, 160).toString('base64'),
  square_logo: pngImage(40, 40).toString('base64'),
  favicon: icoImage(48).toString('base64'),
  devops_team_name: 'test-team',
  ...overrides,
});

export const newOrganizationId = (): string => `t-${randomBytes(6).toString('hex')}`;

/** Keys that sign in users of organizations made by `createOrganization`, per organization. */
const organizationKeys = new Map<string, { api_key_id: string; api_key: string }>();

const apiKeyFor = async (orgSession: Session, roleName: string, headers: Record<string, string> = {}) => {
  const response = await api(`/v1/${orgSession.orgId}/organization/api_key/`, {
    method: 'POST',
    token: orgSession.token,
    headers,
    body: { name: 'fixture', duration: 'P1D', role_name: roleName },
  });
  expectStatus('create API key', response, 201);
  return response.body as { api_key_id: string; api_key: string };
};

/**
 * A fresh, isolated organization (one per test file), created by the root super
 * administrator through X-ORG-ID, and a session of its own super administrator.
 */
export const createOrganization = async (session?: Session): Promise<{ orgId: string; session: Session }> => {
  const creator = session ?? (await rootSession());
  const orgId = newOrganizationId();
  const headers = { ...crossOrgHeaders(creator), 'x-database-cluster-name': 'default' };
  const created = await api(`/v1/${orgId}/organization/`, {
    method: 'PUT',
    token: creator.token,
    headers,
    body: organizationBody(),
  });
  expectStatus('create organization', created, 201);
  const users = await api(`/v1/${orgId}/user/`, { token: creator.token, headers: crossOrgHeaders(creator) });
  expectStatus('list users of the new organization', users, 200);
  const superUser = (users.body.users as { user_id: string; role: string }[]).find(
    (user) => user.role === 'DefaultSuperAdministratorRole',
  );
  if (!superUser) throw new Error('the new organization has no super administrator');
  const key = await apiKeyFor({ ...creator, orgId }, 'DefaultSuperAdministratorRole', crossOrgHeaders(creator));
  organizationKeys.set(orgId, key);
  return { orgId, session: await signIn(orgId, key.api_key_id, key.api_key, superUser.user_id) };
};

/**
 * Invites a user with the role into the session's organization, verifies them through the
 * returned verify_link, and signs them in with an API key of the organization.
 */
export const createUserSession = async (
  orgSession: Session,
  roleName: string,
  overrides: Record<string, unknown> = {},
): Promise<Session & { userId: string; email: string }> => {
  const invited = await inviteUser(orgSession, roleName, overrides);
  const verified = await fetch(invited.verify_link);
  if (verified.status !== 200) throw new Error(`verify link: ${verified.status} ${await verified.text()}`);
  const { credentials } = harness();
  const keyName = organizationKeys.has(orgSession.orgId) ? orgSession.orgId : `${orgSession.orgId}#${roleName}`;
  let key = orgSession.orgId === credentials.org_id ? credentials : organizationKeys.get(keyName);
  if (!key) {
    key = await apiKeyFor(orgSession, roleName);
    organizationKeys.set(keyName, key);
  }
  const session = await signIn(orgSession.orgId, key.api_key_id, key.api_key, invited.user_id);
  return { ...session, email: invited.email };
};

/** Invites a user (not verified, not signed in) and returns the response body. */
export const inviteUser = async (
  orgSession: Session,
  roleName: string,
  overrides: Record<string, unknown> = {},
): Promise<{ user_id: string; verify_link: string; email: string }> => {
  const suffix = randomBytes(4).toString('hex');
  const body = {
    first_name: 'Test',
    last_name: `User ${suffix}`,
    email: `user-${suffix}@example.com`,
    role_name: roleName,
    ...overrides,
  };
  const response = await api(`/v1/${orgSession.orgId}/user/`, { method: 'POST', token: orgSession.token, body });
  expectStatus('invite user', response, 201);
  return { ...response.body, email: body.email as string };
};

/** The API key `createOrganization` made for the organization (role DefaultSuperAdministratorRole). */
export const organizationKey = (orgId: string): { api_key_id: string; api_key: string } => {
  const key = organizationKeys.get(orgId);
  if (!key) throw new Error(`no fixture key for ${orgId}: create it with createOrganization`);
  return key;
};

/** The e-mails sent to an address so far (the local outbox), oldest first. */
export const emailsTo = async (address: string): Promise<{ to: string; subject: string; text: string }[]> => {
  const { outboxDir } = harness();
  const names = (await readdir(outboxDir)).filter((name) => name.endsWith('.json')).sort();
  const messages = await Promise.all(
    names.map(async (name) => JSON.parse(await readFile(join(outboxDir, name), 'utf8'))),
  );
  return messages.filter((message) => message.to === address);
};
