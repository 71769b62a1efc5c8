import { ProvisionedThroughputExceededException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { dynamo } from '../aws/clients';
import { ConflictError, PayloadTooLargeError, ServiceUnavailableError } from '../kernel/errors';
import { getItem, putItem, queryAll, queryPage, transactWrite } from './table';

/** The cancellation DynamoDB answers when another transaction holds the second item. */
const lostRace = () =>
  new TransactionCanceledException({
    message:
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
    $metadata: {},
    CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
  });

describe('table', () => {
  useLocalAws();

  it('refuses a second item with the same key with the caller’s error', async () => {
    // Prepare
    const item = { pk: 'ORG#t1#THING', sk: 'a', name: 'first' };
    await putItem(item, { ifNotExists: () => new ConflictError('exists') });
    // Act / Assess
    await expect(
      putItem({ ...item, name: 'second' }, { ifNotExists: () => new ConflictError('exists') }),
    ).rejects.toThrow(ConflictError);
    expect((await getItem({ pk: item.pk, sk: item.sk }))?.name).toBe('first');
  });

  it('answers 413 for a record larger than DynamoDB stores, instead of failing with a 500', async () => {
    await expect(putItem({ pk: 'ORG#t1#THING', sk: 'huge', blob: 'x'.repeat(410 * 1024) })).rejects.toThrow(
      PayloadTooLargeError,
    );
  });

  it('writes all items of a transaction or none when a condition fails', async () => {
    // Prepare
    await putItem({ pk: 'ORG#t1#GUARD', sk: 'taken' });
    // Act
    const attempt = transactWrite([
      { Put: { Item: { pk: 'ORG#t1#THING', sk: 'half-written' } } },
      { Put: { Item: { pk: 'ORG#t1#GUARD', sk: 'taken' }, ConditionExpression: 'attribute_not_exists(pk)' } },
    ]);
    // Assess
    await expect(attempt).rejects.toThrow(ConflictError);
    expect(await getItem({ pk: 'ORG#t1#THING', sk: 'half-written' })).toBeUndefined();
  });

  describe('when DynamoDB refuses a call that wrote nothing', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('tries a transaction that lost a race again, and writes it once', async () => {
      // Prepare
      const client = dynamo();
      const send = vi.spyOn(client, 'send').mockRejectedValueOnce(lostRace() as never);
      // Act
      await transactWrite([
        { Put: { Item: { pk: 'ORG#t1#RACE', sk: 'a' }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { Item: { pk: 'ORG#t1#RACE', sk: 'b' } } },
      ]);
      // Assess
      expect(send).toHaveBeenCalledTimes(2);
      expect(await getItem({ pk: 'ORG#t1#RACE', sk: 'a' })).toBeDefined();
    });

    it('answers 503 with a retry time once the race is lost on every try, or the throttling outlasts the SDK’s retries', async () => {
      // Prepare
      const send = vi.spyOn(dynamo(), 'send').mockRejectedValue(lostRace() as never);
      // Act / Assess
      await expect(transactWrite([{ Put: { Item: { pk: 'ORG#t1#RACE', sk: 'c' } } }])).rejects.toMatchObject({
        statusCode: 503,
        retryAfterSeconds: 2,
      });
      expect(send).toHaveBeenCalledTimes(10);
      send.mockRejectedValue(
        new ProvisionedThroughputExceededException({ message: 'throttled', $metadata: {} }) as never,
      );
      await expect(getItem({ pk: 'ORG#t1#RACE', sk: 'c' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    });
  });

  it('pages a query by the page size, skipping filtered records, and resumes after the last one returned', async () => {
    // Prepare: 12 records, every third one filtered out
    for (let index = 0; index < 12; index += 1) {
      await putItem({ pk: 'ORG#t2#THING', sk: String(index).padStart(2, '0'), hidden: index % 3 === 0 });
    }
    const spec = { partition: 'ORG#t2#THING' };
    const keep = (item: Record<string, unknown>) => item.hidden !== true;
    // Act
    const first = await queryPage(spec, { limit: 3, keep });
    const second = await queryPage(spec, { limit: 3, keep, startKey: first.nextKey });
    const rest = await queryPage(spec, { limit: 10, keep, startKey: second.nextKey });
    // Assess
    expect(first.items.map((item) => item.sk)).toEqual(['01', '02', '04']);
    expect(second.items.map((item) => item.sk)).toEqual(['05', '07', '08']);
    expect(rest.items.map((item) => item.sk)).toEqual(['10', '11']);
    expect(rest.nextKey).toBeUndefined();
  });

  it('answers an empty page for a range that ends before it starts, which DynamoDB would refuse', async () => {
    // Prepare
    await putItem({ pk: 'ORG#t3#THING', sk: '05' });
    const spec = { partition: 'ORG#t3#THING', sortBetween: ['09', '01'] as [string, string] };
    // Act / Assess
    expect(await queryPage(spec, { limit: 10 })).toEqual({ items: [] });
    expect(await queryAll(spec)).toEqual([]);
    expect((await queryPage({ ...spec, sortBetween: ['01', '09'] }, { limit: 10 })).items).toHaveLength(1);
  });
});
