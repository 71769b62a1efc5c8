import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import { openVoiceSession, type VoiceSession, type VoiceSessionTarget } from '#shared/conversation/voice-session';
import {
  type ClientEvent,
  type CloseCode,
  clientEvent,
  closeCodes,
  type VoiceSessionEvent,
} from '#shared/conversation/voice-session-protocol';
import { authenticateSocketToken } from '#shared/http/authenticate';
import type { Caller } from '#shared/kernel/caller';
import { DomainError } from '#shared/kernel/errors';
import { objectId } from '#shared/kernel/schemas';
import { speechProvider } from '#shared/speech/registry';
import { meteredSink } from './session-metrics';

/**
 * The browser transport of the live voice session: `GET /v1/{organization}/conversation/voice-session`
 * upgraded to a WebSocket speaking OpenAI Realtime's events (docs/voice.md). The same module serves
 * it under `npm start` (the local gateway hands it its upgrades) and in the session container.
 *
 * - Authentication: `Sec-WebSocket-Protocol: auth, <token>`, the token any REST call takes or the
 *   web app's talk token for the conversation (`authenticateSocketToken`); the server selects `auth`. A token in the query string, or none, is refused with 401 before the
 *   upgrade.
 * - Bad input (a frame that is not a JSON event, audio that is not base64 PCM16, a frame over
 *   64 KB) gets an `error` event and the socket closes; the engine does the same for floods, idle
 *   sockets and quotas. One session's input never reaches another's.
 */

export const voiceSessionPathPattern = /^\/v1\/([^/]+)\/conversation\/voice-session\/?$/;
/** AgentCore's path for a runtime's socket: the same session, its organization a query parameter (`/ws?organization=acme&service_id=…`). */
export const agentCorePath = '/ws';

/** The organization a session's upgrade is for, from its path (or AgentCore's query); undefined when it is not a session's. */
const sessionOrganization = (url: URL): string | undefined => {
  if (url.pathname === agentCorePath) {
    const organization = url.searchParams.get('organization') ?? undefined;
    url.searchParams.delete('organization');
    return organization;
  }
  const match = voiceSessionPathPattern.exec(url.pathname);
  return match ? decodeURIComponent(match[1] as string) : undefined;
};

/** The largest frame taken: 64 KB is 2 s of audio in base64, far more than one append needs. */
export const maxFrameBytes = 64 * 1024;
/** What `ws` reads before it drops a frame without a word; frames between the two get an `error` event. */
const readableFrameBytes = 1024 * 1024;

/** Query parameters that would carry a credential in the URL (logged by every proxy on the way). */
const credentialParameters = ['token', 'access_token', 'authorization', 'api_key', 'key', 'jwt'];

const targetQuery = z.union([
  z.object({ service_id: objectId, version_set_name: z.string().min(1).max(40).optional() }).strict(),
  z.object({ conversation_id: objectId }).strict(),
]);

export const refuseUpgrade = (socket: Duplex, status: number, reason: string, detail: string) => {
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
};

const statusReasons: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  422: 'Unprocessable Entity',
};

/** The token of `Sec-WebSocket-Protocol: auth, <token>`, if the client offered it so. */
const offeredToken = (request: IncomingMessage): string | undefined => {
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((protocol) => protocol.trim());
  const at = offered.indexOf('auth');
  const token = at >= 0 ? offered[at + 1] : undefined;
  return token && token !== '' ? token : undefined;
};

/** Events other than audio a client may send before the session is open. */
const maxEarlyEvents = 20;

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

export interface VoiceSessionServer {
  /** Takes an upgrade request if it is for a voice session (true), else leaves it (false). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Closes every session's socket (their conversations stay resumable). */
  close(): Promise<void>;
}

export const createVoiceSessionServer = (options: { log?: (line: string) => void } = {}): VoiceSessionServer => {
  // The first session's recognizer loads its model now, not while the caller speaks.
  // (A provider that cannot be built fails the first session instead, with its error.)
  speechProvider().then(
    (provider) => provider.prepareStream?.(),
    () => undefined,
  );
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: readableFrameBytes,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has('auth') ? 'auth' : false),
  });

  /** The sessions open, so that closing the server waits for their turns to be stored. */
  const sessions = new Set<VoiceSession>();

  const accept = async (request: IncomingMessage, socket: Duplex, head: Buffer, orgId: string, url: URL) => {
    if (credentialParameters.some((name) => url.searchParams.has(name))) {
      return refuseUpgrade(
        socket,
        401,
        'Unauthorized',
        'A token in the URL is refused: send it as the subprotocol (Sec-WebSocket-Protocol: auth, <token>).',
      );
    }
    const token = offeredToken(request);
    if (!token) {
      return refuseUpgrade(
        socket,
        401,
        'Unauthorized',
        'Authenticate with the subprotocol: Sec-WebSocket-Protocol: auth, <token>.',
      );
    }
    const query = targetQuery.safeParse(Object.fromEntries(url.searchParams));
    if (!query.success) {
      return refuseUpgrade(
        socket,
        422,
        'Unprocessable Entity',
        'Give either service_id (a new conversation, with an optional version_set_name) or conversation_id (an unfinished one).',
      );
    }
    let caller: Caller;
    try {
      caller = await authenticateSocketToken({
        orgId,
        token,
        url: `${url.origin}${url.pathname}`,
        conversationId: 'conversation_id' in query.data ? query.data.conversation_id : undefined,
      });
    } catch (error) {
      const status = error instanceof DomainError ? error.statusCode : 500;
      return refuseUpgrade(socket, status, statusReasons[status] ?? 'Error', (error as Error).message);
    }
    const target: VoiceSessionTarget =
      'conversation_id' in query.data
        ? { conversationId: query.data.conversation_id }
        : { serviceId: query.data.service_id, versionSetName: query.data.version_set_name };
    sockets.handleUpgrade(request, socket, head, (ws) => serve(ws, orgId, caller, target));
  };

  const serve = (ws: WebSocket, orgId: string, caller: Caller, target: VoiceSessionTarget) => {
    let sequence = 0;
    let closing = false;
    const send = (event: VoiceSessionEvent) => {
      if (ws.readyState !== ws.OPEN) return;
      sequence += 1;
      const event_id = `event_${sequence}`;
      const wire =
        event.type === 'response.output_audio.delta'
          ? { ...event, audio: undefined, delta: event.audio.toString('base64'), event_id }
          : { ...event, event_id };
      ws.send(JSON.stringify(wire));
    };
    const close = (code: CloseCode, reason: string) => {
      if (closing) return;
      closing = true;
      // A close reason holds at most 123 bytes.
      ws.close(code, Buffer.from(reason).subarray(0, 120).toString());
    };
    const refuse = (code: string, message: string, closeCode: CloseCode = closeCodes.policy, eventId?: string) => {
      send({
        type: 'error',
        error: { type: 'invalid_request_error', code, message, param: null, event_id: eventId ?? null },
      });
      close(closeCode, message);
    };

    let session: VoiceSession | undefined;
    /** Events that came while the session was opening, handled once it is open. */
    const early: ClientEvent[] = [];
    const handle = (event: ClientEvent) => {
      if (!session) {
        // Audio before the session exists has no turn to belong to (the opening is being spoken).
        if (event.type === 'input_audio_buffer.append') return;
        if (early.length >= maxEarlyEvents) refuse('session_not_ready', 'Too many events before session.created.');
        else early.push(event);
        return;
      }
      switch (event.type) {
        case 'input_audio_buffer.append': {
          if (event.audio.length % 4 !== 0 || !base64Pattern.test(event.audio)) {
            refuse('invalid_audio', 'The audio is not base64.', closeCodes.policy, event.event_id);
            return;
          }
          session.appendAudio(Buffer.from(event.audio, 'base64'));
          return;
        }
        case 'session.update':
          session.update(event.session);
          return;
        case 'input_audio_buffer.commit':
          session.commit();
          return;
        case 'conversation.item.truncate':
          void session.truncate(event.item_id, event.audio_end_ms);
          return;
        case 'response.cancel':
          session.cancelResponse();
      }
    };

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (closing) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (bytes.length > maxFrameBytes) {
        refuse('frame_too_large', `A frame holds at most ${maxFrameBytes} bytes.`, closeCodes.tooBig);
        return;
      }
      if (isBinary) {
        refuse('invalid_event', 'Events are JSON text frames.');
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(bytes.toString('utf8'));
      } catch {
        refuse('invalid_json', 'The frame is not JSON.');
        return;
      }
      const event = clientEvent.safeParse(parsed);
      if (!event.success) {
        refuse('invalid_event', `Not an event this server takes: ${z.prettifyError(event.error)}`.slice(0, 500));
        return;
      }
      handle(event.data);
    });
    ws.on('error', (error) => options.log?.(`voice session socket: ${error.message}`));
    ws.on('close', () => {
      closing = true;
      const closed = session;
      if (closed) void closed.close().finally(() => sessions.delete(closed));
    });

    openVoiceSession(orgId, caller, target, meteredSink({ send, close }, 'browser')).then(
      (opened) => {
        session = opened;
        sessions.add(opened);
        if (closing) {
          void opened.close().finally(() => sessions.delete(opened));
          return;
        }
        for (const event of early.splice(0)) handle(event);
      },
      (error: unknown) => {
        const status = error instanceof DomainError ? error.statusCode : 500;
        if (status >= 500) options.log?.(`voice session: ${(error as Error).stack ?? String(error)}`);
        send({
          type: 'error',
          error: {
            type: status >= 500 ? 'server_error' : 'invalid_request_error',
            code: `http_${status}`,
            message: status >= 500 ? 'Internal server error.' : (error as Error).message,
            param: null,
            event_id: null,
          },
        });
        close(status >= 500 ? closeCodes.serverError : closeCodes.policy, 'The session could not start.');
      },
    );
  };

  return {
    handleUpgrade: (request, socket, head) => {
      const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
      const organization = sessionOrganization(url);
      if (organization === undefined) return false;
      accept(request, socket, head, organization, url).catch((error: unknown) => {
        options.log?.(`voice session upgrade: ${(error as Error).stack ?? String(error)}`);
        socket.destroy();
      });
      return true;
    },
    close: async () => {
      for (const client of sockets.clients) client.close(closeCodes.normal, 'The server is stopping.');
      // What the sessions' turns still write is written before the platform's storage goes away.
      await Promise.allSettled([...sessions].map((session) => session.close()));
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
};
