import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Counts DynamoDB round trips per request, for the bench: with `DIAGNOSTIC_ROUND_TRIPS=true`
 * (local runs only; off unless set) the document client counts every request it sends, and the
 * response carries in `x-diagnostic-dynamodb-round-trips` how many the process sent while the
 * request was being served. That is the request's own count when requests are served one at a
 * time, as the bench sends them. A process-wide counter rather than one per async context: async
 * context tracking taxes every promise of the process, which would distort what the bench measures.
 * Off, nothing is counted and no header is sent.
 */
export const roundTripHeader = 'x-diagnostic-dynamodb-round-trips';

export const countsRoundTrips = (): boolean => process.env.DIAGNOSTIC_ROUND_TRIPS === 'true';

let sent = 0;

/** Runs `work`; `read()` gives the round trips the process made since it started. */
export const withRoundTripCounter = <T>(work: (read: () => number) => Promise<T>): Promise<T> => {
  const before = sent;
  return work(() => sent - before);
};

/** Adds the middleware that counts each request sent (in the deserialize step: once per attempt, retries included). */
export const countRoundTripsOf = (client: DynamoDBClient): void => {
  client.middlewareStack.add(
    (next) => async (args) => {
      sent += 1;
      return next(args);
    },
    { step: 'deserialize', name: 'countDynamoDbRoundTrips' },
  );
};
