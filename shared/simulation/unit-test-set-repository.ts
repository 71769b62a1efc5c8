import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { byFieldThenId, uniqueName } from '../data/key-parts';
import { catalogRecordFields, maxCatalogRecords } from '../data/record-catalog';
import { type Item, queryAll, type TransactItem, transactWrite } from '../data/table';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { unitTestRun } from './schemas';

/*
 * Unit test sets (partition, then sort key):
 *   set         SIM_UNIT_TEST_SET       {id}         (creation order)
 *     gsi1 (sort by updated_at)  {updated_at}#{id}
 *   name guard  SIM_UNIT_TEST_SET_NAME  {name}       (names stay taken by deleted sets)
 * Every write is conditioned on the revision it read, `last_triggered_run_id` included.
 */

export const storedUnitTestSet = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  unit_test_runs: z.array(unitTestRun),
  last_triggered_run_id: z.string().nullable(),
  ...catalogRecordFields,
});
export type StoredUnitTestSet = z.infer<typeof storedUnitTestSet>;

export const unitTestSets = defineEntity({
  name: 'simulation-unit-test-set',
  token: 'SIM_UNIT_TEST_SET',
  schema: storedUnitTestSet,
  sort: (set: { id: string }) => set.id,
  indexes: {
    updated_at: { index: 'gsi1', sort: byFieldThenId('updated_at') },
  },
  guards: {
    name: uniqueName('SIM_UNIT_TEST_SET_NAME', (set) => ({ simulation_unit_test_set_id: set.id })),
  },
});

export const unitTestSetNotFound = (id: string) => new NotFoundError(`Simulation unit test set ${id} does not exist.`);

export const getUnitTestSet = (orgId: string, id: string, consistent = false): Promise<StoredUnitTestSet | undefined> =>
  unitTestSets.get(orgId, { id }, consistent);

/** Every set of the organization, at most `maxCatalogRecords`. */
export const allUnitTestSets = async (orgId: string): Promise<StoredUnitTestSet[]> =>
  (await queryAll(unitTestSets.query(orgId, {}), maxCatalogRecords)).map((item: Item) => unitTestSets.parse(item));

/**
 * The transaction item recording a new run of a set: the set must exist and not be deleted,
 * and, when `previousRunId` is given (null: none yet), still name that run as its last, so two
 * runs started at once cannot both become the last. The set's revision moves.
 */
export const lastTriggeredRunUpdate = (
  orgId: string,
  setId: string,
  runId: string,
  previousRunId?: string | null,
): TransactItem => ({
  Update: {
    Key: unitTestSets.key(orgId, { id: setId }),
    UpdateExpression: 'SET last_triggered_run_id = :run, #revision = #revision + :one',
    ConditionExpression: [
      'attribute_exists(pk) AND is_deleted = :false',
      ...(previousRunId === undefined
        ? []
        : [previousRunId === null ? 'last_triggered_run_id = :null' : 'last_triggered_run_id = :previous']),
    ].join(' AND '),
    ExpressionAttributeNames: { '#revision': 'revision' },
    ExpressionAttributeValues: {
      ':run': runId,
      ':one': 1,
      ':false': false,
      ...(previousRunId === undefined
        ? {}
        : previousRunId === null
          ? { ':null': null }
          : { ':previous': previousRunId }),
    },
  },
});

/** Records `runId` as the set's last run; 404 when the set is missing or deleted, 409 when another run got there first. */
export const setLastTriggeredRun = (
  orgId: string,
  setId: string,
  runId: string,
  previousRunId?: string | null,
): Promise<void> =>
  transactWrite([lastTriggeredRunUpdate(orgId, setId, runId, previousRunId)], () =>
    previousRunId === undefined
      ? unitTestSetNotFound(setId)
      : new ConflictError(`Another run of simulation unit test set ${setId} was started at the same time; retry.`),
  );
