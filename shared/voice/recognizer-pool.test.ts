import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createRecognizerPool } from './recognizer-pool';

/** A request that records what the pool does with it, and gives the recognizer back when revoked, as an utterance does. */
const requester = (pool: ReturnType<typeof createRecognizerPool>) => {
  const log: string[] = [];
  const ask = (orgId: string, name: string, giveBackOnRevoke = true) => {
    const lease = pool.request(orgId, {
      granted: () => log.push(`${name} granted`),
      revoked: (revoked) => {
        log.push(`${name} revoked`);
        if (giveBackOnRevoke) revoked.release();
      },
    });
    return lease;
  };
  return { log, ask };
};

describe('createRecognizerPool', () => {
  it('grants an organization the pool less a reserve, so that another organization’s caller finds one free', () => {
    // Prepare: a pool of six keeps two for others.
    const pool = createRecognizerPool(() => 6, { minimumHoldMs: 0 });
    const { log, ask } = requester(pool);

    // Act
    for (const name of ['a1', 'a2', 'a3', 'a4', 'a5']) ask('a', name);
    ask('b', 'b1');

    // Assess
    expect(log).toEqual(['a1 granted', 'a2 granted', 'a3 granted', 'a4 granted', 'b1 granted']);
  });

  it('takes one back from the organization holding the most when the pool is full and another organization waits', () => {
    // Prepare: a holds its share, b the rest.
    const pool = createRecognizerPool(() => 6, { minimumHoldMs: 0 });
    const { log, ask } = requester(pool);
    for (const name of ['a1', 'a2', 'a3', 'a4', 'b1', 'b2']) ask(name.slice(0, 1), name);
    log.length = 0;

    // Act
    ask('c', 'c1');

    // Assess: a's longest held gives it back, and c's caller has it.
    expect(log).toEqual(['a1 revoked', 'c1 granted']);
  });

  it('serves the waiting organization holding the fewest first when a recognizer is freed', () => {
    // Prepare: a holds one, b holds one and waits for more (leases this fresh are not taken back).
    const pool = createRecognizerPool(() => 2);
    const { log, ask } = requester(pool);
    const a1 = ask('a', 'a1');
    ask('b', 'b1');
    ask('b', 'b2');
    ask('c', 'c1', false);
    log.length = 0;

    // Act: c's request is served before b's second (c holds none).
    a1.release();

    // Assess
    expect(log).toEqual(['c1 granted']);
  });

  it('leaves an organization its share: no revocation when it holds no more than the one waiting', () => {
    // Prepare
    const pool = createRecognizerPool(() => 4, { minimumHoldMs: 0 });
    const { log, ask } = requester(pool);
    ask('a', 'a1');
    ask('a', 'a2');
    ask('b', 'b1');
    ask('b', 'b2');

    // Act
    ask('b', 'b3');

    // Assess
    expect(log).toEqual(['a1 granted', 'a2 granted', 'b1 granted', 'b2 granted']);
  });

  it('waits for a revoked recognizer to be given back before granting it', async () => {
    // Prepare: a's lease has been held a while; b's, once granted, has not.
    const pool = createRecognizerPool(() => 1, { minimumHoldMs: 50 });
    const { log, ask } = requester(pool);
    const a1 = ask('a', 'a1', false);
    ask('a', 'a2');
    await sleep(60);

    // Act
    ask('b', 'b1');
    const beforeRelease = [...log];
    a1.release();

    // Assess
    expect(beforeRelease).toEqual(['a1 granted', 'a1 revoked']);
    expect(log.slice(beforeRelease.length)).toEqual(['b1 granted']);
  });
});

describe('createRecognizerPool, a lease just granted', () => {
  it('is not taken back before it has been held a moment', () => {
    // Prepare
    const pool = createRecognizerPool(() => 1);
    const { log, ask } = requester(pool);
    ask('a', 'a1');

    // Act
    ask('b', 'b1');

    // Assess
    expect(log).toEqual(['a1 granted']);
  });
});
