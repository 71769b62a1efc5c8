import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import type { VoiceSessionTransport } from '#shared/aws/business-metrics';
import { callSessionOf } from '#shared/call/call-sessions';
import { config } from '#shared/kernel/config';
import { DomainError, ForbiddenError, UnauthorizedError } from '#shared/kernel/errors';
import { objectId } from '#shared/kernel/schemas';
import { acceptTwilioMediaStream } from '#shared/phone-number/twilio-calls';
import { refreshCaller } from '#shared/user/current-caller';
import type { VoiceCodec } from '#shared/voice/codec';
import { createRealtimeCodec } from '#shared/voice/codecs/realtime';
import { createTwilioCodec, type TwilioStreamStart } from '#shared/voice/codecs/twilio-media-streams';
import type { SessionIdentity } from '#shared/voice/identity';
import type { VoiceSessionOptions, VoiceSessionTarget } from '#shared/voice/session';
import { authenticateSocket, authSubprotocol } from './socket-authentication';
import { decodedSegment } from './upgrades';

/**
 * The transports a session is served on, one route each: where its sockets open, how an upgrade
 * is admitted (who calls, before the socket opens), and its codec (its wire to and from the
 * engine's events). A third transport (a plain PCM socket, SIP) is a codec in
 * `shared/voice/codecs/` and a route here (docs/conventions.md, "Add a transport").
 */

/** What a session opens with: its organization, who talks, the conversation, and what the transport adds (a call's taps). */
export interface SessionOpening {
  orgId: string;
  identity: SessionIdentity;
  target: VoiceSessionTarget;
  options?: Omit<VoiceSessionOptions, 'reportsPlayback' | 'provider'>;
}

export interface SocketTransport<Start> {
  name: VoiceSessionTransport;
  /**
   * The upgrade's path parameters when the path is this transport's (undefined otherwise), or
   * null when it is but its parameters cannot be read (malformed percent-encoding, missing).
   */
  route(url: URL): Record<string, string> | null | undefined;
  /**
   * Admits an upgrade before the socket opens (a `DomainError` refuses it with its status), and
   * says how its session opens: with the codec's `start`, or with none as the socket opens.
   */
  admit(
    request: IncomingMessage,
    url: URL,
    params: Record<string, string>,
  ): Promise<(start?: Start) => Promise<SessionOpening>>;
  codec(): VoiceCodec<Start>;
  /** The subprotocol the server selects among those offered, if this transport authenticates by one. */
  subprotocol?: string;
}

/** A transport whose start's type is its own affair once routed. */
// biome-ignore lint/suspicious/noExplicitAny: each route's codec and admission agree on their own start type.
export type AnyTransport = SocketTransport<any>;

const browserSessionPath = /^\/v1\/([^/]+)\/conversation\/voice-session\/?$/;
/** AgentCore's path for a runtime's socket: the same session, its organization a query parameter (`/ws?organization=acme&service_id=…`). */
const agentCorePath = '/ws';

const targetQuery = z.union([
  z.object({ service_id: objectId, version_set_name: z.string().min(1).max(40).optional() }).strict(),
  z.object({ conversation_id: objectId }).strict(),
]);

/** The browser's socket: OpenAI Realtime's events, authenticated by the `auth, <token>` subprotocol. */
const browser: SocketTransport<undefined> = {
  name: 'browser',
  subprotocol: authSubprotocol,
  route: (url) => {
    if (url.pathname === agentCorePath) {
      const organization = url.searchParams.get('organization');
      url.searchParams.delete('organization');
      return organization ? { organization } : null;
    }
    const match = browserSessionPath.exec(url.pathname);
    if (!match) return undefined;
    const organization = decodedSegment(match[1] as string);
    return organization === undefined ? null : { organization };
  },
  admit: async (request, url, { organization }) => {
    const orgId = organization as string;
    const identity = await authenticateSocket(request, orgId, url);
    const query = targetQuery.safeParse(Object.fromEntries(url.searchParams));
    if (!query.success) {
      throw new DomainError(
        422,
        'Give either service_id (a new conversation, with an optional version_set_name) or conversation_id (an unfinished one).',
      );
    }
    const target: VoiceSessionTarget =
      'conversation_id' in query.data
        ? { conversationId: query.data.conversation_id }
        : { serviceId: query.data.service_id, versionSetName: query.data.version_set_name };
    return async () => ({ orgId, identity, target });
  },
  codec: createRealtimeCodec,
};

const twilioMediaStreamPath = /^\/v1\/([^/]+)\/phone_number\/([^/]+)\/twilio\/media-stream(?:\/([^/]+))?\/?$/;

/** The URL Twilio opened, as it signed it: the configured session host, else the request's own (behind a proxy, as it says). */
const addressedSocketUrl = (request: IncomingMessage): string => {
  const path = request.url ?? '/';
  if (config.voiceSessionUrl) return `${config.voiceSessionUrl}${path}`;
  const first = (value: string | string[] | undefined) =>
    String(value ?? '')
      .split(',')[0]
      ?.trim() || undefined;
  const proto = first(request.headers['x-forwarded-proto']);
  const host = first(request.headers['x-forwarded-host']) ?? request.headers.host ?? 'localhost';
  return `${proto === 'https' || proto === 'wss' ? 'wss' : 'ws'}://${host}${path}`;
};

/**
 * Twilio's media stream, the URL the voice webhook's TwiML `<Connect><Stream>`s a call to (an
 * outbound call's voice URL too): the upgrade must carry Twilio's signature of it, and the call's
 * single-use token in its path, for this number; the stream's `start` must name the token's call.
 * The session talks as the caller's user (unverified when the carrier did not attest their
 * number), or the callee's of a call the platform placed, with the call's own taps
 * (`shared/call/call-sessions.ts`).
 */
const twilio: SocketTransport<TwilioStreamStart> = {
  name: 'twilio',
  route: (url) => {
    const match = twilioMediaStreamPath.exec(url.pathname);
    if (!match) return undefined;
    const organization = decodedSegment(match[1] as string);
    if (organization === undefined) return null;
    return { organization, phoneNumberId: match[2] as string, ...(match[3] ? { callToken: match[3] } : {}) };
  },
  admit: async (request, _url, { organization, phoneNumberId, callToken }) => {
    const { number, call } = await acceptTwilioMediaStream(organization as string, phoneNumberId as string, callToken, {
      url: addressedSocketUrl(request),
      signature: String(request.headers['x-twilio-signature'] ?? '') || undefined,
    });
    return async (start) => {
      if (!start || start.accountSid !== number.twilio_account_sid || start.callSid !== call.callSid) {
        throw new ForbiddenError('The stream is not the call its token was given for.');
      }
      const recheck = async () => {
        const caller = await refreshCaller(
          { homeOrgId: call.orgId, orgId: call.orgId, userId: call.userId, tokenType: 'Bearer' },
          { acceptUnverified: true },
        );
        if (!caller) throw new UnauthorizedError('The caller may no longer call.');
        return caller;
      };
      const caller = await recheck();
      const session = await callSessionOf(number, call);
      return {
        orgId: call.orgId,
        identity: { caller, recheck },
        target: session.target,
        options: { taps: session.taps, director: session.director, announcement: session.announcement },
      };
    };
  },
  codec: createTwilioCodec,
};

export const socketTransports: readonly AnyTransport[] = [browser, twilio];
