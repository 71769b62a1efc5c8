import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '#shared/api/openapi';
import { routeTable } from '#shared/api/route-table';
import type { Operation } from '#shared/kernel/operation';
import { callWithSample } from '../isolation/samples';
import { createService, knownPathValues } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import type { JsonSchema } from '../support/schema-arbitrary';

/**
 * Query numbers are read from decimal text only, by every operation alike (`queryNumber`): every
 * numeric query parameter of every operation is sent `0x10` and `1e1` (422, naming the
 * parameter), and ` 16` and `16.0`, which read as `16` does. On every run, not by chance: the
 * contract fuzz draws its hostile values at random.
 */
const refused = ['0x10', '1e1'];
const readAsSixteen = [' 16', '16.0'];

const isNumeric = (schema: JsonSchema | undefined): boolean =>
  schema !== undefined &&
  (schema.type === 'integer' ||
    schema.type === 'number' ||
    ((schema.anyOf ?? schema.oneOf ?? []) as JsonSchema[]).some((option) => isNumeric(option)));

const document = openApiDocument(routeTable, { title: 'query numbers', version: '0' });
/** Each operation with its numeric query parameters. */
const numericParameters = new Map<string, string[]>();
for (const methods of Object.values(document.paths)) {
  for (const described of Object.values(methods) as {
    operationId: string;
    parameters?: { name: string; in: string; schema?: JsonSchema }[];
  }[]) {
    const names = (described.parameters ?? [])
      .filter((parameter) => parameter.in === 'query' && isNumeric(parameter.schema))
      .map((parameter) => parameter.name);
    if (names.length > 0) numericParameters.set(described.operationId, names);
  }
}
const operations = routeTable.filter((operation) => numericParameters.has(operation.operationId)) as Operation[];

/** Callers of the organization in turn: each operation's requests stay within its rate limit (5 a minute at least). */
let callers: Session[];
let knownIds: Record<string, string>;
let sent = 0;

beforeAll(async () => {
  const { session: admin } = await createOrganization();
  const service = await createService(admin);
  callers = [
    admin,
    await createUserSession(admin, 'DefaultAdministratorRole'),
    await createUserSession(admin, 'DefaultAdministratorRole'),
  ];
  knownIds = knownPathValues(admin, service);
});

/** The 422's issues about query parameter `name`, if the answer is a 422. */
const issuesAbout = async (operation: Operation, name: string, value: string) => {
  const caller = callers[sent++ % callers.length] as Session;
  const answer = await callWithSample(operation, {
    orgId: caller.orgId,
    headers: { authorization: `Bearer ${caller.token}` },
    pathValues: knownIds,
    query: { [name]: value },
  });
  expect(answer.status, `${operation.operationId} ${name}=${JSON.stringify(value)}: ${answer.text}`).not.toBe(429);
  expect(answer.status).toBeLessThan(500);
  if (answer.status !== 422) return { status: answer.status, issues: [] };
  const { detail } = JSON.parse(answer.text) as { detail: { loc: unknown[] }[] };
  return {
    status: answer.status,
    issues: detail.filter((issue) => issue.loc[0] === 'query' && issue.loc[1] === name),
  };
};

describe.each(operations.map((operation) => [operation.operationId, operation] as const))('%s', (_, operation) => {
  it('refuses 0x10 and 1e1 in each numeric query parameter with 422, and reads " 16" and "16.0" as 16', async () => {
    for (const name of numericParameters.get(operation.operationId) ?? []) {
      // Prepare: what plain 16 answers (refused only by a bound below it).
      const sixteen = await issuesAbout(operation, name, '16');

      // Act / Assess
      for (const value of refused) {
        const answer = await issuesAbout(operation, name, value);
        expect(answer.status, `${name}=${value}`).toBe(422);
        expect(answer.issues, `${name}=${value}`).not.toHaveLength(0);
      }
      for (const value of readAsSixteen) {
        const answer = await issuesAbout(operation, name, value);
        expect(answer.issues.length > 0, `${name}=${JSON.stringify(value)}`).toBe(sixteen.issues.length > 0);
      }
    }
  });
});
