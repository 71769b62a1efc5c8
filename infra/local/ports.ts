import { createServer } from 'node:net';

/** Listens on a loopback port, then releases it; resolves with the port actually bound. */
const bindAndRelease = (port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port of a loopback listener'));
      });
    });
  });

/** Asks the OS for a free loopback port, for servers (like DynamoDB Local) that cannot bind port 0 and report back. */
export const freePort = (): Promise<number> => bindAndRelease(0);

/**
 * Fails with a clear message when a requested port is taken. s3rver and local-aws-sqs emit
 * EADDRINUSE as an unhandled 'error' event, which would crash the process instead.
 */
export const assertPortFree = async (port: number, service: string): Promise<void> => {
  try {
    await bindAndRelease(port);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(
      `Port ${port} for local ${service} is not available (${code}). Choose another port or stop the process using it.`,
    );
  }
};
