import { accessTokenLifetimeSeconds, issueAccessToken } from '../auth/tokens';
import { requireAuthorizedConversation, requireInteraction } from '../conversation/conversation-lookup';
import { alreadyFinished } from '../conversation/index';
import type { Caller } from '../kernel/caller';

/**
 * A token for a browser to open a live voice session on a conversation: the web app's session is
 * an HttpOnly cookie its scripts cannot read, and the socket takes its token in the subprotocol.
 * Issued only to a caller who may interact with the conversation, as the caller's own access
 * token (the socket checks the same permissions again).
 */
export const issueVoiceSessionToken = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
): Promise<{ access_token: string; expires_in: number }> => {
  const conversation = await requireAuthorizedConversation(orgId, conversationId, (found) =>
    requireInteraction(caller, found),
  );
  if (conversation.is_finished) throw alreadyFinished(conversationId);
  const issued = await issueAccessToken({ orgId: caller.homeOrgId, userId: caller.userId });
  return { access_token: issued.token, expires_in: accessTokenLifetimeSeconds };
};
