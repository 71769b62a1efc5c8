import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { boundedSend } from './bounded-send';

/** A server socket and a client on loopback; the client's TCP socket is paused: it reads nothing. */
const connectedPair = async () => {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const accepted = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await new Promise<void>((resolve) => client.once('open', () => resolve()));
  return { server, client, serverSide: await accepted };
};

describe('boundedSend', () => {
  it('closes on a client that does not read once what is held passes the bound, not before', async () => {
    // Prepare
    const { server, client, serverSide } = await connectedPair();
    (client as unknown as { _socket: { pause(): void } })._socket.pause();
    let overflows = 0;
    const send = boundedSend(serverSide, 1024 * 1024, () => {
      overflows += 1;
    });
    const frame = 'x'.repeat(64 * 1024);

    // Act: up to 64 MiB, far more than the kernel's buffers hold.
    let sent = 0;
    while (overflows === 0 && sent < 1024) {
      send([frame]);
      sent += 1;
    }
    send([frame]);

    // Assess: it stopped within the bound plus the kernel's buffers, and said so once.
    expect(overflows).toBe(1);
    expect(serverSide.bufferedAmount).toBeLessThanOrEqual(1024 * 1024 + frame.length + 64);
    client.terminate();
    serverSide.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
