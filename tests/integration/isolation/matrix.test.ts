import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { importJWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '#shared/api/route-table';
import type { Operation } from '#shared/kernel/operation';
import { apiUrl, harness } from '../support/client';
import { createOrganization, createUserSession, rootSession, type Session } from '../support/identity';
import { bodySamples, callWithSample, sampleFor, sendsJsonSample } from './samples';

/**
 * Tenant isolation, generated from the route table so every operation added later is
 * covered: for each operation that needs credentials, missing, expired, tampered and
 * foreign credentials are refused, a user without grants is refused (or, for filtered
 * lists, sees nothing), and no refusal carries another organization's data.
 */
const protectedOperations = routeTable.filter((operation) => operation.auth === 'required');

let tenant: { orgId: string; session: Session };
let stranger: { orgId: string; session: Session };
let powerless: Session;
let expiredToken: string;
/** Strings that must never appear in an answer to someone outside the tenant. */
let tenantMarkers: string[];

const tamper = (token: string): string => {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  claims.exp += 3600;
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
};

/** A token exactly like a real one but expired, signed with the platform's key (read from its state folder). */
const expire = async (token: string): Promise<string> => {
  const material = JSON.parse(await readFile(join(dirname(harness().outboxDir), 'signing-key.json'), 'utf8'));
  const [header, payload] = token
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
  const key = await importJWK({ ...material.private_jwk, alg: 'ES256' }, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...payload, iat: now - 7200, exp: now - 3600 }).setProtectedHeader(header).sign(key);
};

/** Records that exist in the tenant, so permission checks run rather than "not found". */
let tenantMetricId: string;

const knownPathValues = (): Record<string, string> => ({
  metric_id: tenantMetricId,
  requested_user_id: tenant.session.userId,
  user_id: tenant.session.userId,
  role_name: 'DefaultUserRole',
});

const call = (operation: Operation, orgId: string, headers: Record<string, string>) =>
  callWithSample(operation, { orgId, headers, pathValues: knownPathValues() });

const expectNoTenantData = (text: string) => {
  for (const marker of tenantMarkers) expect(text).not.toContain(marker);
};

beforeAll(async () => {
  const root = await rootSession();
  tenant = await createOrganization(root);
  stranger = await createOrganization(root);
  const nothing = await fetch(apiUrl(`/v1/${tenant.orgId}/role/`), {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.session.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      role_name: 'NoGrants',
      description: 'Holds no permission.',
      permission_grants: [],
      frontend_view: 'client',
    }),
  });
  expect(nothing.status).toBe(201);
  powerless = await createUserSession(tenant.session, 'NoGrants');
  expiredToken = await expire(tenant.session.token);
  const metric = await fetch(apiUrl(`/v1/${tenant.orgId}/metric/`), {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.session.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Tenant metric',
      description: 'Whether the tenant is isolated.',
      metric_value: { type: 'boolean' },
    }),
  });
  expect(metric.status).toBe(201);
  tenantMetricId = ((await metric.json()) as { id: string }).id;
  tenantMarkers = [tenant.session.userId, `${tenant.orgId}"`];
});

describe.each(protectedOperations.map((operation) => [operation.operationId, operation] as const))(
  'isolation of %s',
  (_, operation) => {
    it('refuses a request without credentials (401)', async () => {
      const response = await call(operation, tenant.orgId, {});
      expect(response.status).toBe(401);
      expectNoTenantData(response.text);
    });

    it('refuses an expired token (401)', async () => {
      const response = await call(operation, tenant.orgId, { authorization: `Bearer ${expiredToken}` });
      expect(response.status).toBe(401);
    });

    it('refuses a tampered token (401)', async () => {
      const response = await call(operation, tenant.orgId, { authorization: `Bearer ${tamper(tenant.session.token)}` });
      expect(response.status).toBe(401);
    });

    it('refuses a token of another organization: 401 undeclared, 403 through X-ORG-ID', async () => {
      const authorization = `Bearer ${stranger.session.token}`;
      const undeclared = await call(operation, tenant.orgId, { authorization });
      expect(undeclared.status).toBe(401);
      expectNoTenantData(undeclared.text);
      const declared = await call(operation, tenant.orgId, { authorization, 'x-org-id': stranger.orgId });
      expect(declared.status).toBe(403);
      expectNoTenantData(declared.text);
    });

    it('gives a user without grants nothing (403, 404, or an empty filtered answer)', async () => {
      const response = await call(operation, tenant.orgId, { authorization: `Bearer ${powerless.token}` });
      const body = operation.request.body;
      const bodyIsValid =
        !body ||
        (sendsJsonSample(operation) && body.safeParse(bodySamples[operation.operationId] ?? sampleFor(body)).success);
      const allowed = bodyIsValid ? [200, 201, 403, 404] : [200, 201, 403, 404, 422];
      expect(allowed).toContain(response.status);
      expectNoTenantData(response.text);
    });
  },
);
