import middy from '@middy/core';
import { describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-runtime';
import { addLogKeys, logger, withObservability } from './observability';

/** The JSON log lines written while `work` runs. */
const logLinesOf = async (work: () => Promise<unknown>): Promise<Record<string, unknown>[]> => {
  const written: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  };
  // Tests log at ERROR and above (vitest.config.ts), which Powertools writes to stderr.
  const spies = [process.stdout, process.stderr].map((stream) => vi.spyOn(stream, 'write').mockImplementation(capture));
  try {
    await work();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
};

describe('withObservability', () => {
  it('adds the invocation keys and context to its log lines, and drops them for the next invocation', async () => {
    const handler = withObservability(
      middy(async (event: { org?: string }) => {
        if (event.org) addLogKeys({ org_id: event.org, user_id: 'u1' });
        logger.error('served', { detail: 'x' });
        return 'ok';
      }),
    );
    const lines = await logLinesOf(async () => {
      await handler({ org: 'acme' }, lambdaContext('classic-api-test', 29_000));
      await handler({}, lambdaContext('classic-api-test', 29_000));
    });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 'ERROR',
      message: 'served',
      org_id: 'acme',
      user_id: 'u1',
      detail: 'x',
      function_name: 'classic-api-test',
    });
    expect(lines[1]).toMatchObject({ message: 'served', function_name: 'classic-api-test' });
    expect(lines[1]).not.toHaveProperty('org_id');
    expect(lines[1]).not.toHaveProperty('user_id');
  });

  it('leaves out a key set to undefined', async () => {
    const handler = withObservability(
      middy(async () => {
        addLogKeys({ org_id: 'acme', message_id: 'm1' });
        addLogKeys({ org_id: undefined });
        logger.error('next message');
      }),
    );
    const [line] = await logLinesOf(() => handler({}, lambdaContext('classic-api-test', 29_000)));
    expect(line).toMatchObject({ message: 'next message', message_id: 'm1' });
    expect(line).not.toHaveProperty('org_id');
  });
});
