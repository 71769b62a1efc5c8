import type { IncomingMessage } from 'node:http';
import { authenticateSocketToken } from '#shared/http/authenticate';
import { UnauthorizedError } from '#shared/kernel/errors';
import type { SessionIdentity } from '#shared/voice/identity';

/**
 * How a browser's socket proves who it is: the `Sec-WebSocket-Protocol: auth, <token>`
 * subprotocol (the vendor's newer SDK authenticates its sockets this way; the server selects
 * `auth`), with the token any REST call takes or the web app's talk token for the conversation. A token in the query string is refused (URLs end up
 * in logs), and so is none. The session checks the token again before each turn (`recheck`): once
 * it expires or is revoked, or its user may no longer act, the session ends.
 */

/** Query parameters that would carry a credential in the URL (logged by every proxy on the way). */
const credentialParameters = ['token', 'access_token', 'authorization', 'api_key', 'key', 'jwt'];

/** The subprotocol a socket that authenticates so is answered with. */
export const authSubprotocol = 'auth';

/** The token of `Sec-WebSocket-Protocol: auth, <token>`, if the client offered it so. */
const offeredToken = (request: IncomingMessage): string | undefined => {
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((protocol) => protocol.trim());
  const at = offered.indexOf(authSubprotocol);
  const token = at >= 0 ? offered[at + 1] : undefined;
  return token && token !== '' ? token : undefined;
};

/** The caller a browser's upgrade request carries, for organization `orgId`; 401 for none, or one in the URL. */
export const authenticateSocket = async (
  request: IncomingMessage,
  orgId: string,
  url: URL,
): Promise<SessionIdentity> => {
  if (credentialParameters.some((name) => url.searchParams.has(name))) {
    throw new UnauthorizedError(
      'A token in the URL is refused: send it as the subprotocol (Sec-WebSocket-Protocol: auth, <token>).',
    );
  }
  const token = offeredToken(request);
  if (!token) throw new UnauthorizedError('Authenticate with the subprotocol: Sec-WebSocket-Protocol: auth, <token>.');
  const authenticate = () =>
    authenticateSocketToken({
      orgId,
      token,
      url: `${url.origin}${url.pathname}`,
      conversationId: url.searchParams.get('conversation_id') ?? undefined,
    });
  return { caller: await authenticate(), recheck: authenticate };
};
