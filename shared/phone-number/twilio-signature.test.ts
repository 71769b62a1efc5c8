import { describe, expect, it } from 'vitest';
import { addressedUrl, isTwilioSignatureValid, twilioSignature, voiceSessionBase } from './twilio-signature';

// Twilio's documented example: this URL, these fields and the auth token 12345.
const documentedUrl = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const documentedForm = new URLSearchParams({
  CallSid: 'CA1234567890ABCDE',
  Caller: '+12349013030',
  Digits: '1234',
  From: '+12349013030',
  To: '+18005551212',
});

describe('twilioSignature', () => {
  it("computes Twilio's documented signature: URL, then the fields sorted by name, HMAC-SHA1, base64", () => {
    expect(twilioSignature('12345', documentedUrl, documentedForm)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  it('signs a WebSocket upgrade (no form) over its URL alone', () => {
    const url = 'wss://voice.example.com/v1/acme/phone_number/0123456789abcdef01234567/twilio/media-stream';
    expect(
      isTwilioSignatureValid('12345', twilioSignature('12345', url, new URLSearchParams()), url, new URLSearchParams()),
    ).toBe(true);
  });
});

describe('isTwilioSignatureValid', () => {
  it('accepts the signature of the URL with or without the default port, as Twilio helpers do', () => {
    const withPort = 'https://mycompany.com:443/myapp.php?foo=1&bar=2';
    const signature = twilioSignature('12345', withPort, documentedForm);
    expect(isTwilioSignatureValid('12345', signature, documentedUrl, documentedForm)).toBe(true);
  });

  it('refuses another token, another field value, another URL and no signature', () => {
    const signature = twilioSignature('12345', documentedUrl, documentedForm);
    const changed = new URLSearchParams(documentedForm);
    changed.set('Digits', '9999');
    expect(isTwilioSignatureValid('54321', signature, documentedUrl, documentedForm)).toBe(false);
    expect(isTwilioSignatureValid('12345', signature, documentedUrl, changed)).toBe(false);
    expect(isTwilioSignatureValid('12345', signature, `${documentedUrl}&baz=3`, documentedForm)).toBe(false);
    expect(isTwilioSignatureValid('12345', undefined, documentedUrl, documentedForm)).toBe(false);
    expect(isTwilioSignatureValid('12345', 'short', documentedUrl, documentedForm)).toBe(false);
  });
});

describe('addressedUrl', () => {
  const requestUrl = 'https://abc.execute-api.us-east-1.amazonaws.com/prod/v1/acme/phone_number/twilio/voice';

  it('keeps the request URL when no proxy names another host', () => {
    expect(addressedUrl(requestUrl, undefined)).toBe(requestUrl);
  });

  it('takes the first host a proxy was addressed by', () => {
    expect(
      addressedUrl('http://127.0.0.1:9000/v1/acme/phone_number/twilio/voice', 'voice.example.com, proxy.internal'),
    ).toBe('http://voice.example.com/v1/acme/phone_number/twilio/voice');
  });

  it('puts the path from /v1/ under a configured public base URL (stage prefix dropped)', () => {
    expect(addressedUrl(requestUrl, 'ignored.example.com', 'https://api.example.com')).toBe(
      'https://api.example.com/v1/acme/phone_number/twilio/voice',
    );
  });
});

describe('voiceSessionBase', () => {
  it("is the configured socket host, else the API's own base as ws:// or wss://", () => {
    expect(voiceSessionBase('https://api.example.com/prod/v1/acme/x', undefined)).toBe('wss://api.example.com/prod');
    expect(voiceSessionBase('http://127.0.0.1:9000/v1/acme/x', undefined)).toBe('ws://127.0.0.1:9000');
    expect(voiceSessionBase('https://api.example.com/v1/acme/x', 'wss://voice.example.com')).toBe(
      'wss://voice.example.com',
    );
    expect(voiceSessionBase('https://api.example.com/v1/acme/x', null)).toBeUndefined();
  });
});
