import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  calculateJwkThumbprint,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { handedOutTokens } from '#shared/auth/auth-session-repository';
import { api, apiUrl, eventually, harness, requestWithHost } from '../support/client';
import {
  createOrganization,
  createUserSession,
  emailsTo,
  inviteUser,
  organizationKey,
  rootSession,
  type Session,
} from '../support/identity';
import { setStoredAttributes } from '../support/table';

let orgId: string;
let superAdmin: Session;
let key: { api_key_id: string; api_key: string };

beforeAll(async () => {
  ({ orgId, session: superAdmin } = await createOrganization(await rootSession()));
  key = organizationKey(orgId);
});

const signInWith = (headers: Record<string, string>) =>
  api(`/v1/${orgId}/user/signin_with_api_key`, { method: 'POST', headers });

describe('sign-in-with-api-key', () => {
  it('returns a one-hour token that authenticates the user', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const response = await signInWith({
      'x-api-key': key.api_key,
      'x-api-key-id': key.api_key_id,
      'x-user-id': user.userId,
    });
    expect(response.status).toBe(200);
    const minutes = (new Date(response.body.expires_at).getTime() - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(59);
    expect(minutes).toBeLessThanOrEqual(60);
    const list = await api(`/v1/${orgId}/user/`, { token: response.body.id_token, query: { user_id: user.userId } });
    expect(list.status).toBe(200);
  });

  it('answers every failure with the same 401', async () => {
    // Prepare: a key of the user role cannot sign in an administrator.
    const admin = await createUserSession(superAdmin, 'DefaultAdministratorRole');
    const userKey = await api(`/v1/${orgId}/organization/api_key/`, {
      method: 'POST',
      token: admin.token,
      body: { duration: 'P1D', role_name: 'DefaultUserRole' },
    });
    const attempts = [
      { 'x-api-key': 'wrong', 'x-api-key-id': key.api_key_id, 'x-user-id': admin.userId },
      { 'x-api-key': key.api_key, 'x-api-key-id': 'f'.repeat(24), 'x-user-id': admin.userId },
      { 'x-api-key': key.api_key, 'x-api-key-id': key.api_key_id, 'x-user-id': 'a'.repeat(24) },
      { 'x-api-key': userKey.body.api_key, 'x-api-key-id': userKey.body.api_key_id, 'x-user-id': admin.userId },
    ];

    // Act
    const responses = await Promise.all(attempts.map(signInWith));

    // Assess
    for (const response of responses) {
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ detail: 'Invalid authorization credentials.' });
    }
  });

  it('a token dated a day ahead answers 401, as a bearer token and as the password of HTTP Basic', async () => {
    // Prepare: the user's own token, signed again with the platform's key, its times moved a day on.
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const { private_jwk: privateJwk } = JSON.parse(
      await readFile(join(dirname(harness().outboxDir), 'signing-key.json'), 'utf8'),
    ) as { private_jwk: JWK };
    const key = await importJWK(privateJwk, 'ES256');
    const resigned = async (shiftSeconds: number) => {
      const header = decodeProtectedHeader(user.token);
      const claims = decodeJwt(user.token) as { iat: number; exp: number };
      return new SignJWT({ ...claims, iat: claims.iat + shiftSeconds, exp: claims.exp + shiftSeconds })
        .setProtectedHeader({ alg: 'ES256', typ: header.typ, kid: header.kid })
        .sign(key);
    };
    const users = (authorization: string) =>
      api(`/v1/${orgId}/user/`, { headers: { authorization }, query: { user_id: user.userId } });
    const basic = (token: string) => `Basic ${Buffer.from(`${orgId}_${user.userId}:${token}`).toString('base64')}`;
    const [dayAhead, unmoved] = [await resigned(86_400), await resigned(0)];

    // Act
    const statuses = [
      (await users(`Bearer ${dayAhead}`)).status,
      (await users(basic(dayAhead))).status,
      (await users(`Bearer ${unmoved}`)).status,
      (await users(basic(unmoved))).status,
    ];

    // Assess
    expect(statuses).toEqual([401, 401, 200, 200]);
  });

  it('refuses an unverified user with 403', async () => {
    const invited = await inviteUser(superAdmin, 'DefaultUserRole');
    const response = await signInWith({
      'x-api-key': key.api_key,
      'x-api-key-id': key.api_key_id,
      'x-user-id': invited.user_id,
    });
    expect(response.status).toBe(403);
  });

  it('signs in 60 times within a minute, as SDK clients made per request do, handing back the fresh token', async () => {
    // Prepare
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const rightKey = { 'x-api-key': key.api_key, 'x-api-key-id': key.api_key_id, 'x-user-id': user.userId };

    // Act: createUserSession signed in once already; half of these come at once.
    const answers = [];
    for (let index = 0; index < 30; index += 1) answers.push(await signInWith(rightKey));
    answers.push(...(await Promise.all(Array.from({ length: 30 }, () => signInWith(rightKey)))));

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 60 }, () => 200));
    expect(new Set(answers.map((answer) => answer.body.id_token))).toEqual(new Set([user.token]));
    expect(new Set(answers.map((answer) => answer.body.expires_at)).size).toBe(1);
  });

  it('mints a new token once the one handed out has less than half its hour left', async () => {
    // Prepare
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const rightKey = { 'x-api-key': key.api_key, 'x-api-key-id': key.api_key_id, 'x-user-id': user.userId };
    const aging = handedOutTokens.key(orgId, { api_key_id: key.api_key_id, user_id: user.userId });
    await setStoredAttributes(aging, { expires_at: new Date(Date.now() + 29 * 60_000).toISOString() });

    // Act
    const renewed = await signInWith(rightKey);
    const again = await signInWith(rightKey);

    // Assess
    expect(renewed.status).toBe(200);
    expect(renewed.body.id_token).not.toBe(user.token);
    expect((new Date(renewed.body.expires_at).getTime() - Date.now()) / 60_000).toBeGreaterThan(59);
    expect(again.body.id_token).toBe(renewed.body.id_token);
    const listed = await api(`/v1/${orgId}/user/`, { token: user.token, query: { user_id: user.userId } });
    expect(listed.status).toBe(200);
  });

  it('answers 401 to a wrong key right after 60 sign-ins', async () => {
    // Prepare
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const rightKey = { 'x-api-key': key.api_key, 'x-api-key-id': key.api_key_id, 'x-user-id': user.userId };
    for (let index = 0; index < 59; index += 1) await signInWith(rightKey);

    // Act
    const response = await signInWith({ ...rightKey, 'x-api-key': 'wrong' });

    // Assess
    expect(response.status).toBe(401);
  });

  it('answers 429 to the sixth wrong secret for a key from one source, even with the right secret', async () => {
    // Prepare: a key of its own, so no other test shares its failure budget.
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const ownKey = await api(`/v1/${orgId}/organization/api_key/`, {
      method: 'POST',
      token: superAdmin.token,
      body: { duration: 'P1D', role_name: 'DefaultUserRole' },
    });
    const attempt = { 'x-api-key-id': ownKey.body.api_key_id, 'x-user-id': user.userId };
    const failures: number[] = [];
    for (let index = 0; index < 5; index += 1)
      failures.push((await signInWith({ ...attempt, 'x-api-key': 'wrong' })).status);

    // Act
    const locked = await signInWith({ ...attempt, 'x-api-key': ownKey.body.api_key });

    // Assess
    expect(failures).toEqual([401, 401, 401, 401, 401]);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('requires the three headers (422)', async () => {
    const response = await signInWith({ 'x-api-key': key.api_key });
    expect(response.status).toBe(422);
  });
});

describe('sign-in-with-email', () => {
  describe('complete-sign-in-with-email', () => {
    it('e-mails a one-time link that redirects with a token', async () => {
      // Prepare
      const user = await createUserSession(superAdmin, 'DefaultUserRole');

      const redirectLink = `${harness().baseUrl}/welcome`;

      // Act
      const response = await api(`/v1/${orgId}/user/signin`, {
        method: 'POST',
        body: { email: user.email, redirect_link: redirectLink },
      });

      // Assess
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ user_id: user.userId });
      const [message] = await eventually(async () => {
        const messages = await emailsTo(user.email);
        return messages.length > 0 ? messages : undefined;
      });
      const link = /(http\S+\/user\/signin\/callback\?token=\S+)/.exec(message?.text ?? '')?.[1] as string;
      const redirected = await fetch(link, { redirect: 'manual' });
      expect(redirected.status).toBe(303);
      const location = new URL(redirected.headers.get('location') as string);
      expect(`${location.origin}${location.pathname}`).toBe(redirectLink);
      const token = new URLSearchParams(location.hash.slice(1)).get('id_token') as string;
      expect((await api(`/v1/${orgId}/organization/`, { token })).body.default_user_preferences).not.toBeNull();
      expect((await fetch(link, { redirect: 'manual' })).status).toBe(401);
    });
  });

  it('answers 404 for an unknown address and 403 for an unverified user', async () => {
    const redirectLink = `${harness().baseUrl}/`;
    const unknown = await api(`/v1/${orgId}/user/signin`, {
      method: 'POST',
      body: { email: 'nobody@example.com', redirect_link: redirectLink },
    });
    expect(unknown.status).toBe(404);
    const invited = await inviteUser(superAdmin, 'DefaultUserRole');
    const unverified = await api(`/v1/${orgId}/user/signin`, {
      method: 'POST',
      body: { email: invited.email, redirect_link: redirectLink },
    });
    expect(unverified.status).toBe(403);
  });

  it("e-mails the link on the platform's public address and checks the redirect against it, whatever Host the request names", async () => {
    // Prepare
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const signIn = (redirectLink: string) =>
      requestWithHost('evil.example', `/v1/${orgId}/user/signin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email, redirect_link: redirectLink }),
      });

    // Act
    const toTheForgedHost = await signIn('http://evil.example/welcome');
    const toThePlatform = await signIn(`${harness().baseUrl}/welcome`);

    // Assess
    expect(toTheForgedHost.status).toBe(422);
    expect(toThePlatform.status).toBe(200);
    const [message] = await emailsTo(user.email);
    const link = new URL(/(http\S+\/user\/signin\/callback\?token=\S+)/.exec(message?.text ?? '')?.[1] as string);
    expect(link.origin).toBe(new URL(harness().baseUrl).origin);
  });

  it('refuses to send a link to another origin (422), which would hand the token to it', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');
    const response = await api(`/v1/${orgId}/user/signin`, {
      method: 'POST',
      body: { email: user.email, redirect_link: 'https://attacker.example/steal' },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'redirect_link']);
    expect(await emailsTo(user.email)).toEqual([]);
  });
});

/** A client's DPoP key and the proofs it signs (RFC 9449). */
const dpopClient = async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return {
    jkt: await calculateJwkThumbprint(jwk),
    proof: (method: string, url: string, claims: Record<string, unknown> = {}) =>
      new SignJWT({ htm: method, htu: url, jti: crypto.randomUUID(), ...claims })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .setIssuedAt()
        .sign(privateKey),
  };
};

const tokenUrl = () => apiUrl(`/v1/${orgId}/user/token`);
const requestToken = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(tokenUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, string> }));

describe('request-token', () => {
  let user: Session & { email: string };
  beforeAll(async () => {
    user = await createUserSession(superAdmin, 'DefaultAdministratorRole');
  });
  const grant = () => ({
    grant_type: 'urn:classic-api:params:oauth:grant-type:api-key',
    api_key_id: key.api_key_id,
    api_key: key.api_key,
    user_id: user.userId,
  });

  it('issues DPoP-bound tokens usable only with a fresh proof by the same key', async () => {
    // Prepare
    const client = await dpopClient();

    // Act
    const issued = await requestToken(grant(), { dpop: await client.proof('POST', tokenUrl()) });

    // Assess
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ token_type: 'DPoP', expires_in: 3600, scope: 'api offline_access' });
    const payload = JSON.parse(Buffer.from(issued.body.access_token?.split('.')[1] ?? '', 'base64url').toString());
    expect(payload.cnf).toEqual({ jkt: client.jkt });
    const url = apiUrl(`/v1/${orgId}/user/`);
    const proof = await client.proof('GET', url);
    const call = (headers: Record<string, string>) => fetch(url, { headers }).then((response) => response.status);
    expect(await call({ authorization: `DPoP ${issued.body.access_token}`, dpop: proof })).toBe(200);
    expect(await call({ authorization: `DPoP ${issued.body.access_token}`, dpop: proof })).toBe(401);
    expect(await call({ authorization: `Bearer ${issued.body.access_token}` })).toBe(401);
    expect(
      await call({ authorization: `DPoP ${issued.body.access_token}`, dpop: await client.proof('POST', url) }),
    ).toBe(401);
    const other = await dpopClient();
    expect(await call({ authorization: `DPoP ${issued.body.access_token}`, dpop: await other.proof('GET', url) })).toBe(
      401,
    );
  });

  it('refreshes a bound session only with a proof by the same key, without rotating the refresh token', async () => {
    // Prepare
    const client = await dpopClient();
    const issued = await requestToken(grant(), { dpop: await client.proof('POST', tokenUrl()) });
    const refresh = { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token as string };

    // Act
    const refreshed = await requestToken(refresh, { dpop: await client.proof('POST', tokenUrl()) });
    const withoutProof = await requestToken(refresh);
    const otherKey = await requestToken(refresh, { dpop: await (await dpopClient()).proof('POST', tokenUrl()) });

    // Assess
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBe(issued.body.refresh_token);
    expect(refreshed.body.session_id).toBe(issued.body.session_id);
    expect(refreshed.body.token_type).toBe('DPoP');
    expect(withoutProof.status).toBe(401);
    expect(otherKey.status).toBe(401);
  });

  it('issues bearer tokens without a proof and rotates their refresh tokens', async () => {
    const issued = await requestToken(grant());
    expect(issued.status).toBe(200);
    expect(issued.body.token_type).toBe('Bearer');
    const refreshed = await requestToken({
      grant_type: 'refresh_token',
      refresh_token: issued.body.refresh_token as string,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(issued.body.refresh_token);
    const replayed = await requestToken({
      grant_type: 'refresh_token',
      refresh_token: issued.body.refresh_token as string,
    });
    expect(replayed.status).toBe(401);
  });

  it('refuses a bad proof, bad credentials (401) and an unknown grant type (400)', async () => {
    const client = await dpopClient();
    const wrongUrl = await requestToken(grant(), { dpop: await client.proof('POST', apiUrl(`/v1/${orgId}/user/`)) });
    expect(wrongUrl.status).toBe(401);
    expect((await requestToken({ ...grant(), api_key: 'wrong' })).status).toBe(401);
    expect((await requestToken({ grant_type: 'password' })).status).toBe(400);
  });
});
