import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { config } from '#shared/kernel/config';
import { DomainError } from '#shared/kernel/errors';
import { speechProvider } from '#shared/speech/registry';
import { type CloseCode, closeCodes, type VoiceError, type VoiceInput } from '#shared/voice/events';
import { openVoiceSession, type VoiceSession } from '#shared/voice/session';
import { boundedSend } from './bounded-send';
import { metricsTap } from './session-metrics';
import { type AnyTransport, type SessionOpening, socketTransports } from './transports';
import { refuseUpgrade, refuseUpgradeFor, upgradeTarget } from './upgrades';

/**
 * Every socket a voice session is opened on (`transports.ts`: the browser's, Twilio's media
 * stream). `npm start`'s gateway and the session container hand each upgrade here. Every upgrade
 * is answered: one that no transport serves with 404, one that cannot be parsed with 400, one a
 * transport refuses with its status, and whatever throws with a clean 500; no request ends the
 * process. Once open, a socket carries its transport's wire, bounded the same way whatever the
 * wire: frames of at most 64 KB, and a client that does not read what it is sent is closed.
 */

/** The largest frame taken: 64 KB is 2 s of audio in base64, far more than one append needs. */
const maxFrameBytes = 64 * 1024;
/** What `ws` reads before it drops a frame without a word; frames between the two are answered as too large. */
const readableFrameBytes = 1024 * 1024;
/**
 * What a socket may hold unsent before its client is taken as not reading: 2 MiB is a minute of the
 * agent's audio in base64, far more than a client that reads ever lets pile up.
 */
const maxBufferedBytes = 2 * 1024 * 1024;
/** Events other than audio a client may send before the session is open. */
const maxEarlyEvents = 20;
/** 20 ms of 16 kHz PCM16, the early audio's unit of account. */
const bytesPerMs = 32;

export interface SessionSockets {
  /** Answers an upgrade request: a session's socket, or an HTTP refusal. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every session's socket (their conversations stay resumable). */
  close(): Promise<void>;
}

/** A close reason holds at most 123 bytes. */
const closeReason = (reason: string) => Buffer.from(reason).subarray(0, 120).toString();

export const createSessionSockets = (options: { log?: (line: string) => void } = {}): SessionSockets => {
  // The first session's recognizer loads its model now, not while the caller speaks.
  // (A provider that cannot be built fails the first session instead, with its error.)
  speechProvider().then(
    (provider) => provider.prepareStream?.(),
    () => undefined,
  );
  const servers = new Map<AnyTransport, WebSocketServer>(
    socketTransports.map((transport) => [
      transport,
      new WebSocketServer({
        noServer: true,
        maxPayload: readableFrameBytes,
        perMessageDeflate: false,
        ...(transport.subprotocol
          ? {
              handleProtocols: (offered: Set<string>) =>
                offered.has(transport.subprotocol as string) ? (transport.subprotocol as string) : false,
            }
          : {}),
      }),
    ]),
  );
  /** The sessions open, so that closing the server waits for their turns to be stored. */
  const sessions = new Set<VoiceSession>();

  const serve = (ws: WebSocket, transport: AnyTransport, open: (start?: unknown) => Promise<SessionOpening>) => {
    const codec = transport.codec();
    let closing = false;
    let opening = false;
    let session: VoiceSession | undefined;
    /** What came while the session was opening, handed to it once it is open. */
    const early: VoiceInput[] = [];
    let earlyAudioBytes = 0;

    const close = (code: CloseCode, reason: string) => {
      if (closing) return;
      closing = true;
      ws.close(code, closeReason(reason));
    };
    // A client that does not read would have the server hold what it is sent without end.
    const write = boundedSend(ws, maxBufferedBytes, () =>
      close(closeCodes.policy, 'The client does not read what it is sent.'),
    );
    const refuse = (error: VoiceError, closeCode: CloseCode = closeCodes.policy) => {
      if (closing) return;
      write(codec.refusal(error));
      close(closeCode, error.message);
    };
    const keepEarly = (input: VoiceInput) => {
      if (input.type === 'audio') {
        if (codec.earlyAudioMs === 0) return;
        early.push(input);
        earlyAudioBytes += input.pcm.length;
        // Only the latest of it is kept.
        while (earlyAudioBytes > codec.earlyAudioMs * bytesPerMs) {
          const dropped = early.findIndex((kept) => kept.type === 'audio');
          const [audio] = early.splice(dropped, 1);
          earlyAudioBytes -= audio?.type === 'audio' ? audio.pcm.length : 0;
        }
        return;
      }
      if (early.length - early.filter((kept) => kept.type === 'audio').length >= maxEarlyEvents) {
        refuse({ code: 'session_not_ready', message: 'Too many events before the session opened.', clientFault: true });
      } else early.push(input);
    };

    const openSession = (start?: unknown) => {
      opening = true;
      open(start)
        .then(({ orgId, identity, target, options: added = {} }) =>
          openVoiceSession(
            orgId,
            identity,
            target,
            { send: (event) => write(codec.encode(event)), close },
            {
              ...added,
              reportsPlayback: codec.reportsPlayback,
              taps: [metricsTap(transport.name), ...(added.taps ?? [])],
            },
          ),
        )
        .then(
          (opened) => {
            session = opened;
            sessions.add(opened);
            if (closing) {
              void opened.close().finally(() => sessions.delete(opened));
              return;
            }
            for (const input of early.splice(0)) opened.input(input);
          },
          (error: unknown) => {
            const status = error instanceof DomainError ? error.statusCode : 500;
            if (status >= 500 && status !== 503)
              options.log?.(`voice session: ${(error as Error).stack ?? String(error)}`);
            refuse(
              {
                code: `http_${status}`,
                message: status >= 500 && status !== 503 ? 'Internal server error.' : (error as Error).message,
                clientFault: status < 500,
              },
              status === 503 ? closeCodes.tryAgainLater : status >= 500 ? closeCodes.serverError : closeCodes.policy,
            );
          },
        );
    };

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (closing) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (bytes.length > maxFrameBytes) {
        const message = `A frame holds at most ${maxFrameBytes} bytes.`;
        return refuse({ code: 'frame_too_large', message, clientFault: true }, closeCodes.tooBig);
      }
      if (isBinary) {
        return refuse({ code: 'invalid_event', message: 'Events are JSON text frames.', clientFault: true });
      }
      const decoded = codec.decode(bytes.toString('utf8'));
      switch (decoded.type) {
        case 'refused':
          return refuse(decoded.error, decoded.closeCode);
        case 'start':
          if (!opening) openSession(decoded.start);
          return;
        case 'input':
          if (session) return session.input(decoded.input);
          return keepEarly(decoded.input);
        case 'ignored':
          return;
      }
    });
    ws.on('error', (error) => options.log?.(`voice session socket: ${error.message}`));
    ws.on('close', () => {
      closing = true;
      const closed = session;
      if (closed) void closed.close().finally(() => sessions.delete(closed));
    });
    if (codec.opensOn === 'upgrade') openSession();
  };

  const accept = async (
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    url: URL,
    transport: AnyTransport,
    params: Record<string, string>,
  ) => {
    const open = await transport.admit(request, url, params);
    (servers.get(transport) as WebSocketServer).handleUpgrade(request, socket, head, (ws) =>
      serve(ws, transport, open),
    );
  };

  return {
    handleUpgrade: (request, socket, head) => {
      // A connection reset while it is refused or upgraded is the client's doing, not an error to end on.
      socket.on('error', (error) => options.log?.(`voice session socket: ${error.message}`));
      try {
        const url = upgradeTarget(request);
        if (!url) return refuseUpgrade(socket, 400, 'The request target cannot be parsed.');
        for (const transport of socketTransports) {
          const params = transport.route(url);
          if (params === undefined) continue;
          if (params === null)
            return refuseUpgrade(
              socket,
              400,
              'The path cannot be read: its percent-encoding is malformed, or a part is missing.',
            );
          if (config.maintenanceMode)
            return refuseUpgrade(socket, 503, 'The service is going through temporary maintenance.');
          accept(request, socket, head, url, transport, params).catch((error: unknown) =>
            refuseUpgradeFor(socket, error, options.log),
          );
          return;
        }
        refuseUpgrade(socket, 404, 'Not Found');
      } catch (error) {
        refuseUpgradeFor(socket, error, options.log);
      }
    },
    close: async () => {
      for (const server of servers.values()) {
        for (const client of server.clients) client.close(closeCodes.normal, 'The server is stopping.');
      }
      // What the sessions' turns still write is written before the platform's storage goes away.
      await Promise.allSettled([...sessions].map((session) => session.close()));
      await Promise.all(
        [...servers.values()].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
    },
  };
};
