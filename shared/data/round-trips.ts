import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Counts DynamoDB round trips per request, for the bench: with `DIAGNOSTIC_ROUND_TRIPS=true`
 * (local runs only; off unless set) the document client counts every request it sends into
 * the store of the HTTP request being served, and the response carries the count in
 * `x-diagnostic-dynamodb-round-trips`. Off, nothing is counted and no header is sent.
 */
export const roundTripHeader = 'x-diagnostic-dynamodb-round-trips';

export const countsRoundTrips = (): boolean => process.env.DIAGNOSTIC_ROUND_TRIPS === 'true';

const counters = new AsyncLocalStorage<{ count: number }>();

/** Runs `work` with a counter of its own; `read()` gives the round trips made so far. */
export const withRoundTripCounter = <T>(work: (read: () => number) => Promise<T>): Promise<T> => {
  const counter = { count: 0 };
  return counters.run(counter, () => work(() => counter.count));
};

/** Adds the middleware that counts each request sent (in the deserialize step: once per attempt, retries included). */
export const countRoundTripsOf = (client: DynamoDBClient): void => {
  client.middlewareStack.add(
    (next) => async (args) => {
      const counter = counters.getStore();
      if (counter) counter.count += 1;
      return next(args);
    },
    { step: 'deserialize', name: 'countDynamoDbRoundTrips' },
  );
};
