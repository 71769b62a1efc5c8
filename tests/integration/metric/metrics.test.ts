import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createGrantedSession, createService, uniqueName } from '../support/fixtures';
import { createOrganization, createUserSession, crossOrgHeaders, rootSession, type Session } from '../support/identity';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: metric operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

/** A user who may read metrics and nothing more: refused with 403 where a user who may not read them gets 404. */
const reader = () => createGrantedSession(owner, [{ permission_name: 'Metric:GetMetric', conditions: {} }]);

const metricsPath = () => `/v1/${orgId}/metric/`;
const metricPath = (metricId: string) => `/v1/${orgId}/metric/${metricId}/`;
const versionsPath = (metricId: string) => `/v1/${orgId}/metric/${metricId}/version`;

const numerical = { type: 'numerical', lower_bound: 1, upper_bound: 5 };

/** The reference's create body. */
const referenceBody = (overrides: Record<string, unknown> = {}) => ({
  name: uniqueName('Empathy'),
  applied_to_services: [],
  additional_notes: null,
  tags: {},
  initial_version_metric_value: { description: 'How empathetic the agent was.', metric_value: numerical },
  ...overrides,
});

const createMetric = async (session: Session, overrides: Record<string, unknown> = {}): Promise<string> => {
  const response = await api(metricsPath(), { token: session.token, body: referenceBody(overrides) });
  expect(response.status, response.text).toBe(201);
  return response.body.id as string;
};

const getMetric = async (session: Session, metricId: string) => {
  const response = await api(metricsPath(), { token: session.token, query: { id: metricId } });
  expect(response.status, response.text).toBe(200);
  return response.body.metrics[0];
};

const idsOf = (metrics: { id: string }[]) => metrics.map((metric) => metric.id);

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

describe('create-metric', () => {
  it('creates a metric with its first version from the reference body', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Empathy');

    // Act
    const created = await api(metricsPath(), {
      token: session.token,
      body: referenceBody({ name, tags: { team: 'care' } }),
    });
    const metric = await getMetric(session, created.body.id);

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[a-f0-9]{24}$/) });
    expect(metric).toEqual({
      id: created.body.id,
      org_id: orgId,
      name,
      applied_to_services: [],
      additional_notes: null,
      tags: [{ key: 'team', value: 'care' }],
      creator: { org_id: orgId, user_id: session.userId },
      updated_by: { org_id: orgId, user_id: session.userId },
      metric_value_type: 'numerical',
      is_deleted: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      latest_version: 1,
      description: 'How empathetic the agent was.',
      metric_value: numerical,
    });
  });

  it("accepts the spec's body, with description and metric_value at the top level", async () => {
    // Prepare
    const session = await admin();
    const body = {
      name: uniqueName('Resolved'),
      description: 'Whether the issue was resolved.',
      metric_value: { type: 'boolean' },
    };

    // Act
    const created = await api(metricsPath(), { token: session.token, body });
    const versions = await api(versionsPath(created.body.id), { token: session.token });

    // Assess
    expect(created.status).toBe(201);
    expect(versions.body.metric_versions).toEqual([
      {
        metric_id: created.body.id,
        version: 1,
        description: 'Whether the issue was resolved.',
        metric_value: { type: 'boolean' },
        creator: { org_id: orgId, user_id: session.userId },
        created_at: expect.any(String),
      },
    ]);
  });

  it('rejects a duplicate metric name with 409', async () => {
    // Prepare
    const session = await admin();
    const name = uniqueName('Twin');
    await createMetric(session, { name });

    // Act
    const duplicate = await api(metricsPath(), { token: session.token, body: referenceBody({ name }) });

    // Assess
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail).toContain(name);
  });

  it.each([
    ['bounds that are not increasing', { type: 'numerical', lower_bound: 5, upper_bound: 5 }],
    ['no category', { type: 'categorical', categories: [] }],
    ['repeated categories', { type: 'categorical', categories: ['good', 'good'] }],
    [
      'more than 50 categories',
      { type: 'categorical', categories: Array.from({ length: 51 }, (_, index) => `c${index}`) },
    ],
    ['an unknown type', { type: 'text' }],
  ])('rejects a metric value with %s with 422', async (_, metricValue) => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(metricsPath(), {
      token: session.token,
      body: referenceBody({ initial_version_metric_value: { description: 'Anything.', metric_value: metricValue } }),
    });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc.slice(0, 3)).toEqual(['body', 'initial_version_metric_value', 'metric_value']);
  });

  it('rejects a body with neither or both revisions of the first version with 422', async () => {
    // Prepare
    const session = await admin();

    // Act
    const neither = await api(metricsPath(), { token: session.token, body: { name: uniqueName('None') } });
    const both = await api(metricsPath(), {
      token: session.token,
      body: referenceBody({ description: 'Twice.', metric_value: { type: 'boolean' } }),
    });

    // Assess
    expect(neither.status).toBe(422);
    expect(neither.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.'))).toEqual([
      'body.description',
      'body.metric_value',
    ]);
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(['body', 'initial_version_metric_value']);
  });

  it('answers 403 to a caller without Metric:CreateMetric', async () => {
    // Prepare
    const user = await createUserSession(owner, 'DefaultUserRole');

    // Act
    const response = await api(metricsPath(), { token: user.token, body: referenceBody() });

    // Assess
    expect(response.status).toBe(403);
  });
});

describe('get-metrics', () => {
  let serviceId: string;
  let tagged: string;
  let other: string;
  let deleted: string;
  let session: Session;

  beforeAll(async () => {
    const creator = await admin();
    ({ serviceId } = await createService(creator));
    tagged = await createMetric(creator, { applied_to_services: [serviceId], tags: { area: 'list test' } });
    other = await createMetric(creator, {
      tags: { area: 'list test' },
      initial_version_metric_value: {
        description: 'Tone.',
        metric_value: { type: 'categorical', categories: ['warm', 'cold'] },
      },
    });
    deleted = await createMetric(creator, { tags: { area: 'list test' } });
    expect((await api(metricPath(deleted), { method: 'DELETE', token: creator.token })).status).toBe(200);
    session = await admin();
  });

  it('filters by service, type and tag, and leaves deleted metrics out by default', async () => {
    // Act
    const byService = await api(metricsPath(), { token: session.token, query: { applied_to_service: serviceId } });
    const byType = await api(metricsPath(), {
      token: session.token,
      query: { type: 'categorical', tag: 'area:list test' },
    });
    const byTag = await api(metricsPath(), { token: session.token, query: { tag: 'area:list test' } });
    const onlyDeleted = await api(metricsPath(), {
      token: session.token,
      query: { tag: 'area:*', is_deleted: 'true' },
    });

    // Assess
    expect(idsOf(byService.body.metrics)).toEqual([tagged]);
    expect(idsOf(byType.body.metrics)).toEqual([other]);
    expect(idsOf(byTag.body.metrics)).toEqual([tagged, other]);
    expect(idsOf(onlyDeleted.body.metrics)).toEqual([deleted]);
  });

  it('retrieves a deleted metric by id', async () => {
    // Act
    const metric = await getMetric(session, deleted);

    // Assess
    expect(metric).toMatchObject({ id: deleted, is_deleted: true });
  });

  it('pages with a continuation token and gives filter values on the first page only', async () => {
    // Act
    const first = await api(metricsPath(), { token: session.token, query: { tag: 'area:list test', limit: 1 } });
    const second = await api(metricsPath(), {
      token: session.token,
      query: { tag: 'area:list test', limit: 1, continuation_token: first.body.continuation_token },
    });

    // Assess
    expect(first.body).toMatchObject({ has_more: true, metrics: [{ id: tagged }] });
    expect(first.body.filter_values.types).toEqual(expect.arrayContaining(['numerical', 'categorical']));
    expect(first.body.filter_values.applied_to_services_ids).toContain(serviceId);
    expect(first.body.filter_values.tags).toContain('area:list test');
    expect(second.body).toMatchObject({
      has_more: false,
      continuation_token: null,
      filter_values: null,
      metrics: [{ id: other }],
    });
  });

  it('sorts by updated_at', async () => {
    // Prepare
    const updater = await admin();
    expect(
      (await api(metricPath(tagged), { token: updater.token, body: { additional_notes: 'Touched.' } })).status,
    ).toBe(200);

    // Act
    const sorted = await api(metricsPath(), {
      token: session.token,
      query: { tag: 'area:list test', sort_by: '-updated_at' },
    });

    // Assess
    expect(idsOf(sorted.body.metrics)).toEqual([tagged, other]);
  });

  it('shows a caller without Metric:GetMetric nothing', async () => {
    // Prepare
    const user = await createUserSession(owner, 'DefaultUserRole');

    // Act
    const response = await api(metricsPath(), { token: user.token });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.metrics).toEqual([]);
  });

  it('answers a platform administrator acting through X-ORG-ID', async () => {
    // Prepare
    const root = await rootSession();

    // Act
    const response = await api(metricsPath(), {
      token: root.token,
      headers: crossOrgHeaders(root),
      query: { id: tagged },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(idsOf(response.body.metrics)).toEqual([tagged]);
  });
});

describe('update-metric', () => {
  it('changes services, notes and tags; {} keeps the notes and null erases them', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session, { additional_notes: 'First notes.', tags: { a: 'b' } });
    const { serviceId } = await createService(session);

    // Act
    const changed = await api(metricPath(metricId), {
      token: session.token,
      body: { applied_to_services: [serviceId], additional_notes: {}, tags: { c: null }, name: 'Ignored' },
    });
    const afterChange = await getMetric(session, metricId);
    const erased = await api(metricPath(metricId), { token: session.token, body: { additional_notes: null } });
    const afterErase = await getMetric(session, metricId);

    // Assess
    expect(changed.status).toBe(200);
    expect(changed.body).toBeNull();
    expect(afterChange).toMatchObject({
      applied_to_services: [serviceId],
      additional_notes: 'First notes.',
      tags: [{ key: 'c', value: null }],
    });
    expect(afterChange.name).not.toBe('Ignored');
    expect(erased.status).toBe(200);
    expect(afterErase).toMatchObject({ additional_notes: null, applied_to_services: [serviceId] });
  });

  it('answers 404 for an unknown or unreadable metric, 403 without Metric:ModifyMetric, 422 for a bad service id', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);
    const user = await createUserSession(owner, 'DefaultUserRole');
    const readOnly = await reader();

    // Act
    const unknown = await api(metricPath('0'.repeat(24)), { token: session.token, body: { tags: {} } });
    const hidden = await api(metricPath(metricId), { token: user.token, body: { tags: {} } });
    const forbidden = await api(metricPath(metricId), { token: readOnly.token, body: { tags: {} } });
    const invalid = await api(metricPath(metricId), { token: session.token, body: { applied_to_services: ['nope'] } });

    // Assess
    expect(unknown.status).toBe(404);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ detail: `Metric ${metricId} does not exist.` });
    expect(forbidden.status).toBe(403);
    expect(invalid.status).toBe(422);
  });
});

describe('delete-metric', () => {
  it('deletes softly: the metric and its versions stay retrievable by id', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);

    // Act
    const deleted = await api(metricPath(metricId), { method: 'DELETE', token: session.token });
    const metric = await getMetric(session, metricId);
    const versions = await api(versionsPath(metricId), { token: session.token });

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body).toBeNull();
    expect(metric).toMatchObject({ id: metricId, is_deleted: true, updated_by: { user_id: session.userId } });
    expect(versions.body.metric_versions).toHaveLength(1);
  });

  it('answers 404 for an unknown or unreadable metric and 403 without Metric:DeleteMetric', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);
    const user = await createUserSession(owner, 'DefaultUserRole');
    const readOnly = await reader();

    // Act
    const unknown = await api(metricPath('0'.repeat(24)), { method: 'DELETE', token: session.token });
    const hidden = await api(metricPath(metricId), { method: 'DELETE', token: user.token });
    const forbidden = await api(metricPath(metricId), { method: 'DELETE', token: readOnly.token });

    // Assess
    expect(unknown.status).toBe(404);
    expect(hidden.status).toBe(404);
    expect(forbidden.status).toBe(403);
  });
});

describe('search-metrics', () => {
  it('ranks name matches above description matches and leaves deleted metrics out', async () => {
    // Prepare
    const session = await admin();
    const word = `zq${Date.now().toString(36)}`;
    const inDescription = await createMetric(session, {
      name: uniqueName('Courtesy'),
      initial_version_metric_value: { description: `Mentions ${word} politely.`, metric_value: { type: 'boolean' } },
    });
    const inName = await createMetric(session, { name: `${word} score` });
    const gone = await createMetric(session, { name: `${word} old` });
    await api(metricPath(gone), { method: 'DELETE', token: session.token });

    // Act
    const response = await api(`/v1/${orgId}/metric/search/`, { token: session.token, query: { query: word } });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.metrics.map((metric: { _id: string }) => metric._id)).toEqual([inName, inDescription]);
    expect(response.body.metrics[0]).toMatchObject({
      name: `${word} score`,
      metric_value_type: 'numerical',
      is_deleted: false,
    });
  });

  it('rejects a missing query with 422', async () => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(`/v1/${orgId}/metric/search/`, { token: session.token });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'query']);
  });
});

describe('create-metric-version', () => {
  it('adds a version with new bounds, which the metric then shows', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);
    const next = {
      description: 'Empathy, 0 to 10.',
      metric_value: { type: 'numerical', lower_bound: 0, upper_bound: 10 },
    };

    // Act
    const created = await api(`${versionsPath(metricId)}/`, {
      token: session.token,
      body: next,
      query: { version: 2 },
    });
    const metric = await getMetric(session, metricId);

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ version: 2 });
    expect(metric).toMatchObject({ latest_version: 2, description: next.description, metric_value: next.metric_value });
  });

  it('refuses a change of the value type with 400 and a version check that fails with 409', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);

    // Act
    const retyped = await api(`${versionsPath(metricId)}/`, {
      token: session.token,
      body: { description: 'Now yes or no.', metric_value: { type: 'boolean' } },
    });
    const stale = await api(`${versionsPath(metricId)}/`, {
      token: session.token,
      body: { description: 'Same type.', metric_value: numerical },
      query: { version: 5 },
    });

    // Assess
    expect(retyped.status).toBe(400);
    expect(retyped.body.detail).toContain('numerical');
    expect(stale.status).toBe(409);
  });

  it('answers 404 for an unknown or unreadable metric, 403 without Metric:ModifyMetric, 422 for bad bounds', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);
    const user = await createUserSession(owner, 'DefaultUserRole');
    const readOnly = await reader();
    const body = { description: 'Anything.', metric_value: numerical };

    // Act
    const unknown = await api(`${versionsPath('0'.repeat(24))}/`, { token: session.token, body });
    const hidden = await api(`${versionsPath(metricId)}/`, { token: user.token, body });
    const forbidden = await api(`${versionsPath(metricId)}/`, { token: readOnly.token, body });
    const invalid = await api(`${versionsPath(metricId)}/`, {
      token: session.token,
      body: { ...body, metric_value: { type: 'numerical', lower_bound: 3, upper_bound: 1 } },
    });

    // Assess
    expect(unknown.status).toBe(404);
    expect(hidden.status).toBe(404);
    expect(forbidden.status).toBe(403);
    expect(invalid.status).toBe(422);
  });
});

describe('get-metric-versions', () => {
  it('lists versions in order, the latest alone, or newest first', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);
    await api(`${versionsPath(metricId)}/`, {
      token: session.token,
      body: { description: 'Second.', metric_value: numerical },
    });

    // Act
    const all = await api(versionsPath(metricId), { token: session.token });
    const latest = await api(versionsPath(metricId), { token: session.token, query: { version: 'latest' } });
    const newestFirst = await api(versionsPath(metricId), { token: session.token, query: { sort_by: '-version' } });

    // Assess
    expect(all.body.metric_versions.map((version: { version: number }) => version.version)).toEqual([1, 2]);
    expect(latest.body.metric_versions.map((version: { description: string }) => version.description)).toEqual([
      'Second.',
    ]);
    expect(newestFirst.body.metric_versions.map((version: { version: number }) => version.version)).toEqual([2, 1]);
  });

  it('answers 404 for an unknown metric, and the same for one the caller may not read', async () => {
    // Prepare
    const session = await admin();
    const metricId = await createMetric(session);
    const user = await createUserSession(owner, 'DefaultUserRole');

    // Act
    const unknown = await api(versionsPath('0'.repeat(24)), { token: session.token });
    const hidden = await api(versionsPath(metricId), { token: user.token });

    // Assess
    expect(unknown.status).toBe(404);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ detail: `Metric ${metricId} does not exist.` });
  });
});
