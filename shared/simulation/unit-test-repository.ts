import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { byFieldThenId, uniqueName } from '../data/key-parts';
import { catalogRecordFields, maxCatalogRecords } from '../data/record-catalog';
import { type Item, queryAll, type TransactItem } from '../data/table';
import { NotFoundError } from '../kernel/errors';
import { toolMock } from '../tool/schemas';
import { successCriterion } from './schemas';

/*
 * Unit tests (partition, then sort key):
 *   unit test   SIM_UNIT_TEST       {id}         (creation order)
 *     gsi1 (sort by updated_at)  {updated_at}#{id}
 *   name guard  SIM_UNIT_TEST_NAME  {name}       (names stay taken by deleted unit tests)
 * Every write is conditioned on the revision it read. A set that starts using a unit test moves
 * its revision in the set's transaction (`claimUnitTest`), so a deletion racing it fails and checks again.
 */

export const storedUnitTest = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string(),
  service_id: z.string(),
  service_version_set_name: z.string(),
  persona_id: z.string(),
  scenario_id: z.string(),
  max_interactions: z.number().int(),
  success_criterions: z.array(successCriterion),
  run_count: z.number().int(),
  tool_mocks: z.array(toolMock).default([]),
  user_variables: z.record(z.string(), z.string()).default({}),
  initial_state: z.string().nullable().default(null),
  expected_escalation: z.boolean().nullable().default(null),
  ...catalogRecordFields,
});
export type StoredUnitTest = z.infer<typeof storedUnitTest>;

export const unitTests = defineEntity({
  name: 'simulation-unit-test',
  token: 'SIM_UNIT_TEST',
  schema: storedUnitTest,
  sort: (unitTest: { id: string }) => unitTest.id,
  indexes: {
    updated_at: { index: 'gsi1', sort: byFieldThenId('updated_at') },
  },
  guards: {
    name: uniqueName('SIM_UNIT_TEST_NAME', (unitTest) => ({ simulation_unit_test_id: unitTest.id })),
  },
});

export const unitTestNotFound = (id: string) => new NotFoundError(`Simulation unit test ${id} does not exist.`);

export const getUnitTest = (orgId: string, id: string, consistent = false): Promise<StoredUnitTest | undefined> =>
  unitTests.get(orgId, { id }, consistent);

/** The unit tests of `ids` that exist, by id. */
export const getUnitTests = async (orgId: string, ids: string[]): Promise<Map<string, StoredUnitTest>> =>
  new Map(
    (
      await unitTests.getMany(
        orgId,
        [...new Set(ids)].map((id) => ({ id })),
      )
    ).map((unitTest) => [unitTest.id, unitTest]),
  );

/** Every unit test of the organization, at most `maxCatalogRecords`. */
export const allUnitTests = async (orgId: string): Promise<StoredUnitTest[]> =>
  (await queryAll(unitTests.query(orgId, {}), maxCatalogRecords)).map((item: Item) => unitTests.parse(item));

/** The transaction item claiming a unit test for a set: it must exist and not be deleted; its revision moves. */
export const claimUnitTest = (orgId: string, id: string): TransactItem => ({
  Update: {
    Key: unitTests.key(orgId, { id }),
    UpdateExpression: 'SET #revision = #revision + :one',
    ConditionExpression: 'attribute_exists(pk) AND is_deleted = :false',
    ExpressionAttributeNames: { '#revision': 'revision' },
    ExpressionAttributeValues: { ':one': 1, ':false': false },
  },
});
