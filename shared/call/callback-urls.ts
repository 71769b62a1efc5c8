/**
 * The URLs Twilio is given for a call it places: each names the call by its id (known before
 * Twilio answers with the SID), so a callback finds its record even if the process that placed
 * the call stopped before recording the SID. Twilio signs each request over the URL exactly as
 * given here, so the base is the API's address as the client that placed the call reached it.
 */
export const callbackPaths = {
  voice: 'voice',
  status: 'status',
  amd: 'amd',
  whisper: 'whisper',
  continue: 'continue',
} as const;

export type CallbackKind = keyof typeof callbackPaths;

export const callbackUrl = (apiBase: string, orgId: string, kind: CallbackKind, callId: string): string =>
  `${apiBase}/v1/${encodeURIComponent(orgId)}/call/twilio/${callbackPaths[kind]}?call_id=${callId}`;
