import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { newId } from '../kernel/ids';
import { defineEntity } from './entity';
import { recordOutcomeOnce, writeIfUnchanged } from './revisions';

const aggregates = defineEntity({
  name: 'revision-test-aggregate',
  token: 'REVISION_TEST_AGGREGATE',
  schema: z.object({ id: z.string(), counted: z.number().int(), revision: z.number().int() }),
  sort: (of: { id: string }) => of.id,
});

const outcomes = defineEntity({
  name: 'revision-test-outcome',
  token: 'REVISION_TEST_OUTCOME',
  schema: z.object({ id: z.string(), outcome: z.string().nullable() }),
  sort: (of: { id: string }) => of.id,
});

const orgId = 'org-revisions';

const newAggregate = async () => {
  const aggregate = { id: newId(), counted: 0, revision: 0 };
  await aggregates.put(orgId, aggregate);
  return aggregate;
};

describe('revisions (DynamoDB Local)', () => {
  useLocalAws();

  it('replaces a record at the next revision only if nobody wrote it since it was read', async () => {
    // Prepare
    const read = await newAggregate();

    // Act
    const first = await writeIfUnchanged(aggregates.replacement(orgId, { ...read, counted: 1 }, read));
    const stale = await writeIfUnchanged(aggregates.replacement(orgId, { ...read, counted: 5 }, read));

    // Assess
    expect(first).toBe(true);
    expect(stale).toBe(false);
    expect(await aggregates.get(orgId, read, true)).toEqual({ ...read, counted: 1, revision: 1 });
  });

  it('writes what goes with a replacement all or nothing, and reports the replacement’s own failure as stale', async () => {
    // Prepare
    const read = await newAggregate();
    const outcome = { id: newId(), outcome: 'passed' };
    await outcomes.put(orgId, outcome);
    const taken = outcomes.create(orgId, outcome);

    // Act
    const refused = await writeIfUnchanged(aggregates.replacement(orgId, { ...read, counted: 1 }, read), [taken]).catch(
      (error: unknown) => error,
    );
    await writeIfUnchanged(aggregates.replacement(orgId, { ...read, counted: 2 }, read));
    const stale = await writeIfUnchanged(aggregates.replacement(orgId, { ...read, counted: 3 }, read), [
      outcomes.create(orgId, { id: newId(), outcome: null }),
    ]);

    // Assess: the first failed on its other item (an error), the last on the revision (false).
    expect(refused).toBeInstanceOf(Error);
    expect(stale).toBe(false);
    expect(await aggregates.get(orgId, read, true)).toMatchObject({ counted: 2, revision: 1 });
  });

  it('records an outcome once with the aggregate counting it, however often it is recorded again', async () => {
    // Prepare
    const read = await newAggregate();
    const pending = { id: newId(), outcome: null };
    await outcomes.put(orgId, pending);
    const record = (aggregate: typeof read) =>
      recordOutcomeOnce(
        outcomes.item(orgId, { ...pending, outcome: 'passed' }),
        aggregates.replacement(orgId, { ...aggregate, counted: aggregate.counted + 1 }, aggregate),
      );

    // Act
    const first = await record(read);
    const again = await record({ ...read, revision: 1, counted: 1 });
    const fromStale = await record(read);

    // Assess
    expect([first, again, fromStale]).toEqual(['recorded', 'already-recorded', 'already-recorded']);
    expect(await aggregates.get(orgId, read, true)).toMatchObject({ counted: 1, revision: 1 });
    expect(await outcomes.get(orgId, pending, true)).toEqual({ ...pending, outcome: 'passed' });
  });

  it('tells a recorder whose aggregate moved on to read it again, recording nothing', async () => {
    // Prepare
    const read = await newAggregate();
    await writeIfUnchanged(aggregates.replacement(orgId, { ...read, counted: 7 }, read));
    const pending = { id: newId(), outcome: null };
    await outcomes.put(orgId, pending);

    // Act
    const recorded = await recordOutcomeOnce(
      outcomes.item(orgId, { ...pending, outcome: 'failed' }),
      aggregates.replacement(orgId, { ...read, counted: 1 }, read),
    );

    // Assess
    expect(recorded).toBe('changed');
    expect(await outcomes.get(orgId, pending, true)).toEqual(pending);
  });
});
