import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { McpExchangeError, withMcpServer } from './mcp-client';

/** A loopback listener counting what reaches it: a refused URL must not reach it at all. */
let reached = 0;
const listener = createServer((_request, response) => {
  reached += 1;
  response.end();
});
let port: number;

beforeAll(async () => {
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

const failureOf = (url: string) =>
  withMcpServer({ url, headers: {} }, 2_000, async () => 'connected').then(
    () => undefined,
    (error: unknown) => error,
  );

describe('withMcpServer', () => {
  it('refuses http and loopback, private and link-local addresses as AWS runs it, before any request', async () => {
    // Prepare
    vi.stubEnv('MCP_ALLOW_LOCAL_SERVERS', '');

    // Act
    const failures = await Promise.all(
      [
        `http://127.0.0.1:${port}/mcp`,
        `https://127.0.0.1:${port}/mcp`,
        'https://10.0.0.8/mcp',
        'https://169.254.169.254/latest/meta-data',
        'https://[::1]/mcp',
      ].map(failureOf),
    );

    // Assess
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(McpExchangeError);
      expect((failure as McpExchangeError).kind).toBe('McpServerRefused');
    }
    expect(reached).toBe(0);
    vi.unstubAllEnvs();
  });

  it('reaches a loopback server locally, and fails one that is not MCP as a server error', async () => {
    // Prepare
    vi.stubEnv('MCP_ALLOW_LOCAL_SERVERS', 'true');

    // Act
    const failure = await failureOf(`http://127.0.0.1:${port}/mcp`);

    // Assess
    expect(reached).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(McpExchangeError);
    expect((failure as McpExchangeError).kind).toBe('McpServerError');
    vi.unstubAllEnvs();
  });
});
