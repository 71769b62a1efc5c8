import { describe, expect, it } from 'vitest';
import { appLocation, appPublicHome, organizationOfHost } from './organization-host';

describe('organizationOfHost', () => {
  it('finds the organization of a host directly under the domain', () => {
    expect(organizationOfHost('Acme.App.Example.com', 'app.example.com')).toBe('acme');
    expect(organizationOfHost('a.b.app.example.com', 'app.example.com')).toBeUndefined();
    expect(organizationOfHost('acmeXapp.example.com', 'app.example.com')).toBeUndefined();
  });
});

describe('appLocation', () => {
  const api = new URL('https://abc.execute-api.eu-central-1.amazonaws.com/prod/app/acme/console');

  it("serves the app at the root of the organization's own host when the CDN names it", () => {
    expect(appLocation(api, 'acme', 'acme.app.example.com', 'app.example.com')).toEqual({ base: '', secure: true });
  });

  it("ignores a host that is not this organization's, as a request sent straight to the API may carry", () => {
    const underApi = { base: '/prod/app/acme', secure: true };
    expect(appLocation(api, 'acme', 'evil.app.example.com', 'app.example.com')).toEqual(underApi);
    expect(appLocation(api, 'acme', 'acme.evil.net', 'app.example.com')).toEqual(underApi);
    expect(appLocation(api, 'acme', 'acme.app.example.com', undefined)).toEqual(underApi);
  });

  it('serves the root of {org}.localhost without Secure cookies', () => {
    expect(appLocation(new URL('http://acme.localhost:9417/console'), 'acme', undefined, undefined)).toEqual({
      base: '',
      secure: false,
    });
  });
});

describe('appPublicHome', () => {
  const inAws = {
    publicBaseUrl: 'https://abc.execute-api.eu-central-1.amazonaws.com/prod',
    frontendDomain: 'app.example.com',
  };
  const local = { publicBaseUrl: 'http://127.0.0.1:8120', frontendDomain: undefined };

  it('is the app under the public address when the app is served under the API', () => {
    expect(appPublicHome('acme', '/prod/app/acme', inAws)).toBe(
      'https://abc.execute-api.eu-central-1.amazonaws.com/prod/app/acme',
    );
    expect(appPublicHome('acme', '/app/acme', local)).toBe('http://127.0.0.1:8120/app/acme');
  });

  it("is the organization's own host, named from the settings, when the app is served at its root", () => {
    expect(appPublicHome('acme', '', inAws)).toBe('https://acme.app.example.com');
    expect(appPublicHome('acme', '', local)).toBe('http://acme.localhost:8120');
  });
});
