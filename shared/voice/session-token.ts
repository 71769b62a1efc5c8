import { issueTalkToken } from '../auth/app-sessions';
import { requireAuthorizedConversation, requireInteraction } from '../conversation/conversation-lookup';
import { alreadyFinished } from '../conversation/index';
import type { Caller } from '../kernel/caller';

/**
 * A token for a browser to open a live voice session on a conversation: the web app's session is
 * an HttpOnly cookie its scripts cannot read, and the socket takes its token in the subprotocol.
 * Issued only to a caller who may interact with the conversation, in the caller's web app session:
 * a talk token, which opens this conversation's socket and nothing else, for 5 minutes, and is
 * refused once the session ends (`shared/auth/app-sessions.ts`; the socket checks the same
 * permissions again).
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
  const issued = await issueTalkToken({
    orgId: caller.homeOrgId,
    userId: caller.userId,
    appSessionId: caller.appSessionId ?? '',
    conversationId,
  });
  return { access_token: issued.token, expires_in: issued.expiresIn };
};
