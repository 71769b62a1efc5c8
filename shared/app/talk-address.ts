/**
 * Where the chat page's talk mode opens its socket: the conversation's live voice session on the
 * sessions' own host (`VOICE_SESSION_URL`, set by the stack in AWS, where API Gateway serves no
 * sockets), or on the page's host (`npm start` serves both on one port, the URL left unset); none
 * where the deployment serves no sessions (`none`: `voiceSessionHosting=none`).
 */
export const talkSessionAddress = (
  voiceSessionUrl: string | null | undefined,
  orgId: string,
  conversationId: string,
): string | undefined =>
  voiceSessionUrl === null
    ? undefined
    : `${voiceSessionUrl ?? ''}/v1/${encodeURIComponent(orgId)}/conversation/voice-session?conversation_id=${encodeURIComponent(conversationId)}`;

/** What the page's Content-Security-Policy lets it connect to besides itself: the sessions' host, when it is another. */
export const talkConnectSources = (voiceSessionUrl: string | null | undefined): string =>
  voiceSessionUrl ? ` ${new URL(voiceSessionUrl).origin}` : '';
