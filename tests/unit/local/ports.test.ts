import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { assertPortFree, freePort } from '../../../infra/local/ports';

const listen = (port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePort', () => {
  it('returns a loopback port that can be bound', async () => {
    // Act
    const port = await freePort();

    // Assess
    const server = await listen(port);
    server.close();
    expect(port).toBeGreaterThan(0);
  });
});

describe('assertPortFree', () => {
  it('rejects a port another listener holds, naming the service', async () => {
    // Prepare
    const server = await listen(0);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;

    // Act
    const check = assertPortFree(port, 'S3');

    // Assess
    await expect(check).rejects.toThrow(`Port ${port} for local S3 is not available (EADDRINUSE)`);
    server.close();
  });
});
