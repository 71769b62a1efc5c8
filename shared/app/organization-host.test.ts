import { describe, expect, it } from 'vitest';
import { appLocation, organizationOfHost } from './organization-host';

describe('organizationOfHost', () => {
  it('finds the organization of a host directly under the domain', () => {
    expect(organizationOfHost('Acme.App.Example.com', 'app.example.com')).toBe('acme');
    expect(organizationOfHost('a.b.app.example.com', 'app.example.com')).toBeUndefined();
    expect(organizationOfHost('acmeXapp.example.com', 'app.example.com')).toBeUndefined();
  });
});

describe('appLocation', () => {
  const api = new URL('https://abc.execute-api.eu-central-1.amazonaws.com/prod/app/acme/console');

  it("builds links from the organization's own host when the CDN names it", () => {
    expect(appLocation(api, 'acme', 'acme.app.example.com', 'app.example.com')).toEqual({
      origin: 'https://acme.app.example.com',
      base: '',
      secure: true,
    });
  });

  it("ignores a host that is not this organization's, as a request sent straight to the API may carry", () => {
    const underApi = {
      origin: 'https://abc.execute-api.eu-central-1.amazonaws.com',
      base: '/prod/app/acme',
      secure: true,
    };
    expect(appLocation(api, 'acme', 'evil.app.example.com', 'app.example.com')).toEqual(underApi);
    expect(appLocation(api, 'acme', 'acme.evil.net', 'app.example.com')).toEqual(underApi);
    expect(appLocation(api, 'acme', 'acme.app.example.com', undefined)).toEqual(underApi);
  });

  it('serves the root of {org}.localhost without Secure cookies', () => {
    expect(appLocation(new URL('http://acme.localhost:9417/console'), 'acme', undefined, undefined)).toEqual({
      origin: 'http://acme.localhost:9417',
      base: '',
      secure: false,
    });
  });
});
