import { describe, expect, it } from 'vitest';
import { talkConnectSources, talkSessionAddress } from './talk-address';

describe('talkSessionAddress', () => {
  it("is the sessions' host where they have one, the page's own host under npm start, and none without sessions", () => {
    expect(talkSessionAddress('wss://d111.cloudfront.net', 'acme', 'c1')).toBe(
      'wss://d111.cloudfront.net/v1/acme/conversation/voice-session?conversation_id=c1',
    );
    expect(talkSessionAddress(undefined, 'acme', 'c1')).toBe('/v1/acme/conversation/voice-session?conversation_id=c1');
    expect(talkSessionAddress(null, 'acme', 'c1')).toBeUndefined();
  });
});

describe('talkConnectSources', () => {
  it("adds the sessions' origin to what the page may connect to, only when they are on another host", () => {
    expect(talkConnectSources('wss://d111.cloudfront.net/')).toBe(' wss://d111.cloudfront.net');
    expect(talkConnectSources(undefined)).toBe('');
    expect(talkConnectSources(null)).toBe('');
  });
});
