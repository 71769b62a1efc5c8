import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { accessTokenHash } from '../auth/dpop';
import { issueAccessToken } from '../auth/tokens';
import { ForbiddenError, UnauthorizedError } from '../kernel/errors';
import { defaultRole } from '../role/default-roles';
import type { Principal } from '../user/principal';
import { authenticateRequest } from './authenticate';

const principals = new Map<string, Principal>();
vi.mock('../user/principal', () => ({
  loadPrincipal: async (orgId: string, userId: string) => principals.get(`${orgId}/${userId}`),
}));
vi.mock('../auth/auth-session-repository', () => ({ consumeNonce: async () => undefined }));
vi.mock('../user/temporary-grant-repository', () => ({ activeGrantsOf: async () => [] }));

const userId = 'a'.repeat(24);
const principal = (orgId: string, roleName: 'DefaultUserRole' | 'DefaultSuperAdministratorRole', verified = true) => {
  const role = defaultRole(roleName);
  principals.set(`${orgId}/${userId}`, {
    user: { user_id: userId, email: 'someone@example.com', is_verified: verified } as Principal['user'],
    role: { id: `${roleName}-id`, name: roleName } as Principal['role'],
    grants: role.permission_grants,
  });
};

const url = 'https://api.example.com/v1/acme/user/';
const request = (orgId: string, headers: Record<string, string>) => ({ orgId, headers, method: 'GET', url });

beforeAll(async () => {
  process.env.SIGNING_KEY_FILE = join(await mkdtemp(join(tmpdir(), 'authenticate-test-')), 'key.json');
  process.env.ROOT_ORG_ID = 'root';
  principal('acme', 'DefaultUserRole');
  principal('root', 'DefaultSuperAdministratorRole');
  principal('unverified', 'DefaultUserRole', false);
});

const bearer = async (orgId: string) => `Bearer ${(await issueAccessToken({ orgId, userId })).token}`;

describe('authenticateRequest', () => {
  it('returns the caller of a bearer token of the path organization', async () => {
    const caller = await authenticateRequest(request('acme', { authorization: await bearer('acme') }));
    expect(caller).toMatchObject({
      userId,
      orgId: 'acme',
      homeOrgId: 'acme',
      roleName: 'DefaultUserRole',
      tokenType: 'Bearer',
    });
    expect(caller.isPlatformAdministrator).toBeUndefined();
  });

  it('answers the same 401 for a missing, malformed or unknown credential', async () => {
    for (const authorization of [undefined, 'Bearer', 'Bearer nope', 'Token abc', await bearer('ghost')]) {
      const attempt = authenticateRequest(request('acme', authorization ? { authorization } : {}));
      await expect(attempt).rejects.toThrowError(new UnauthorizedError());
    }
  });

  it('refuses an unverified user with 403', async () => {
    await expect(
      authenticateRequest(request('unverified', { authorization: await bearer('unverified') })),
    ).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('refuses a token of another organization: 401 undeclared, 403 declared without grants', async () => {
    const authorization = await bearer('acme');
    await expect(authenticateRequest(request('other', { authorization }))).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(authenticateRequest(request('other', { authorization, 'x-org-id': 'acme' }))).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(authenticateRequest(request('acme', { authorization, 'x-org-id': 'other' }))).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('lets a root super administrator act on another organization through X-ORG-ID or Basic', async () => {
    const token = (await issueAccessToken({ orgId: 'root', userId })).token;
    const viaHeader = await authenticateRequest(
      request('acme', { authorization: `Bearer ${token}`, 'x-org-id': 'root' }),
    );
    const basic = Buffer.from(`root_${userId}:${token}`).toString('base64');
    const viaBasic = await authenticateRequest(request('acme', { authorization: `Basic ${basic}` }));
    for (const caller of [viaHeader, viaBasic]) {
      expect(caller).toMatchObject({ orgId: 'acme', homeOrgId: 'root', isPlatformAdministrator: true });
    }
    expect(viaBasic.tokenType).toBe('Basic');
  });

  it('refuses Basic credentials naming another user than the token', async () => {
    const token = (await issueAccessToken({ orgId: 'acme', userId })).token;
    const basic = Buffer.from(`acme_${'b'.repeat(24)}:${token}`).toString('base64');
    await expect(authenticateRequest(request('acme', { authorization: `Basic ${basic}` }))).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('needs a proof by the bound key for a DPoP token, and refuses it as a bearer token', async () => {
    // Prepare
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const jkt = await calculateJwkThumbprint(jwk);
    const { token } = await issueAccessToken({ orgId: 'acme', userId, jkt });
    const proof = await new SignJWT({ htm: 'GET', htu: url, jti: crypto.randomUUID(), ath: accessTokenHash(token) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .setIssuedAt()
      .sign(privateKey);

    // Act
    const caller = await authenticateRequest(request('acme', { authorization: `DPoP ${token}`, dpop: proof }));

    // Assess
    expect(caller.tokenType).toBe('DPoP');
    await expect(authenticateRequest(request('acme', { authorization: `Bearer ${token}` }))).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await expect(authenticateRequest(request('acme', { authorization: `DPoP ${token}` }))).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });
});
