import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { caller } from '../service/fixtures';
import { defineEntity } from './entity';
import { uniqueName } from './key-parts';
import { catalogRecordFields, changeLiveRecord, newRecordFields, StaleRecordError, usingKind } from './record-catalog';
import { firstSimulationUser } from './usage-links';

/** A kind of record that uses "parts" (as unit test sets use unit tests), each of which must exist. */
const assembly = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  parts: z.array(z.string()),
  ...catalogRecordFields,
});
type Assembly = z.infer<typeof assembly>;

const assemblies = defineEntity({
  name: 'using-kind-test-assembly',
  token: 'USING_KIND_TEST_ASSEMBLY',
  schema: assembly,
  sort: (of: { id: string }) => of.id,
  indexes: { updated_at: { index: 'gsi1', sort: (record: Assembly) => `${record.updated_at}#${record.id}` } },
  guards: { name: uniqueName('USING_KIND_TEST_ASSEMBLY_NAME', (record) => ({ assembly_id: record.id })) },
});

const parts = defineEntity({
  name: 'using-kind-test-part',
  token: 'USING_KIND_TEST_PART',
  schema: z.object({ id: z.string() }),
  sort: (of: { id: string }) => of.id,
});

const partTarget = (id: string) => `part#${id}`;
const partNotFound = (id: string) => new NotFoundError(`Part ${id} does not exist.`);

const { store, create } = usingKind<Assembly>({
  entity: assemblies,
  label: 'Assembly',
  read: 'Simulation:GetSimulationUnitTestSet',
  create: 'Simulation:CreateSimulationUnitTestSet',
  attributes: (record) => ({ id: record.id, name: record.name }),
  notFound: (id) => new NotFoundError(`Assembly ${id} does not exist.`),
  targetsOf: (record) => record.parts.map(partTarget),
  claims: (orgId, record, added) =>
    record.parts
      .filter((id) => added.includes(partTarget(id)))
      .map((id) => ({
        item: { ConditionCheck: { Key: parts.key(orgId, { id }), ConditionExpression: 'attribute_exists(pk)' } },
        failure: () => partNotFound(id),
      })),
  check: async () => undefined,
});

const orgId = 'org-using-kind';

const newPart = async (): Promise<string> => {
  const id = newId();
  await parts.put(orgId, { id });
  return id;
};

const newAssembly = (name: string, partIds: string[]): Assembly => ({
  ...newRecordFields(orgId, caller, { name, tags: {} }),
  parts: partIds,
});

describe('usingKind (DynamoDB Local)', () => {
  useLocalAws();

  it('creates a record with its name guard and the links of what it uses; a second of the name is 409', async () => {
    // Prepare
    const part = await newPart();
    const name = `assembly ${newId()}`;

    // Act
    const first = newAssembly(name, [part]);
    await create(orgId, caller, first);
    const second = await create(orgId, caller, newAssembly(name, [part])).catch((error: unknown) => error);

    // Assess
    expect(await store.get(orgId, first.id, true)).toEqual(first);
    expect(second).toBeInstanceOf(ConflictError);
    expect((second as Error).message).toBe(`A assembly named '${name}' already exists.`);
    expect(await firstSimulationUser(orgId, partTarget(part))).toMatchObject({ user_id: first.id, user_name: name });
  });

  it('refuses, with its claim’s 404, a record using something that does not exist, writing nothing', async () => {
    // Prepare
    const missing = newId();
    const record = newAssembly(`assembly ${newId()}`, [missing]);

    // Act
    const refused = await create(orgId, caller, record).catch((error: unknown) => error);

    // Assess
    expect((refused as Error).message).toBe(`Part ${missing} does not exist.`);
    expect(await store.get(orgId, record.id, true)).toBeUndefined();
  });

  it('moves the name guard and the links on a change, and tells a stale write to read again', async () => {
    // Prepare
    const [before, after] = [await newPart(), await newPart()];
    const record = newAssembly(`assembly ${newId()}`, [before]);
    await create(orgId, caller, record);
    const renamed = `assembly ${newId()}`;

    // Act
    await changeLiveRecord(store, orgId, record.id, async (current) => ({ ...current, name: renamed, parts: [after] }));
    const stale = await store.save(orgId, { ...record, name: 'stale' }, record).catch((error: unknown) => error);
    await create(orgId, caller, newAssembly(record.name, []));

    // Assess: the old name is free again, the links followed the parts.
    expect(await store.get(orgId, record.id, true)).toMatchObject({ name: renamed, parts: [after], revision: 1 });
    expect(stale).toBeInstanceOf(StaleRecordError);
    expect(await firstSimulationUser(orgId, partTarget(before))).toBeUndefined();
    expect(await firstSimulationUser(orgId, partTarget(after))).toMatchObject({ user_id: record.id });
  });
});
