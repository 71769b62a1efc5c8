import { describe, expect, it } from 'vitest';
import { checkDestination, judgeAddress, RefusedDestinationError } from './destination-address';

describe('judgeAddress', () => {
  it('refuses private, loopback, link-local, metadata, ULA and unspecified addresses', () => {
    for (const address of [
      '10.0.0.1',
      '172.16.5.4',
      '192.168.0.10',
      '127.0.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::',
      '::1',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::5',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      'ff02::1',
    ]) {
      expect(judgeAddress(address, false), address).toMatchObject({ allowed: false });
    }
  });

  it('allows public addresses', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) {
      expect(judgeAddress(address, false), address).toEqual({ allowed: true });
    }
  });

  it('allows loopback, and only loopback, when local destinations are allowed', () => {
    expect(judgeAddress('127.0.0.1', true)).toEqual({ allowed: true });
    expect(judgeAddress('::1', true)).toEqual({ allowed: true });
    expect(judgeAddress('10.0.0.1', true)).toMatchObject({ allowed: false });
    expect(judgeAddress('169.254.169.254', true)).toMatchObject({ allowed: false });
  });
});

describe('checkDestination', () => {
  it('refuses http:// and loopback hosts when the local setting is off', async () => {
    await expect(checkDestination('http://127.0.0.1:9000/hook', false)).rejects.toThrow(RefusedDestinationError);
    await expect(checkDestination('https://127.0.0.1:9000/hook', false)).rejects.toThrow(/refused address/);
    await expect(checkDestination('https://localhost/hook', false)).rejects.toThrow(/refused address/);
  });

  it('accepts http:// loopback destinations when the local setting is on', async () => {
    await expect(checkDestination('http://localhost:9000/hook', true)).resolves.toMatchObject({
      address: expect.stringMatching(/^(127\.|::1)/),
    });
  });

  it('refuses URLs carrying credentials and other schemes', async () => {
    await expect(checkDestination('https://user:pass@example.com/', false)).rejects.toThrow(/credentials/);
    await expect(checkDestination('file:///etc/passwd', true)).rejects.toThrow(/https/);
  });
});
