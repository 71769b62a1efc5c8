import { describe, expect, it } from 'vitest';
import { isSafeLink, renderMarkdown } from './markdown';

const rendered = (source: string) => renderMarkdown(source).text;

describe('renderMarkdown', () => {
  it('renders headings, emphasis, lists and safe links', () => {
    const page = rendered('# Welcome\n\n*Hello* there\n\n- one\n- [docs](https://example.com/docs)');
    expect(page).toContain('<h1>Welcome</h1>');
    expect(page).toContain('<em>Hello</em>');
    expect(page).toContain('<li>one</li>');
    expect(page).toContain('<a href="https://example.com/docs" rel="noopener noreferrer nofollow">docs</a>');
  });

  it.each([
    ['a script tag', '<script>alert(1)</script>'],
    ['an event handler attribute', '<img src=x onerror=alert(1)>'],
    ['an inline iframe', 'text <iframe src="https://evil.example"></iframe>'],
    ['a style block', '<style>body{display:none}</style>'],
  ])('shows %s as text instead of markup', (_, source) => {
    const page = rendered(source);
    expect(page).not.toMatch(/<(script|img|iframe|style)/i);
    expect(page).toContain('&lt;');
  });

  it.each([
    ['javascript:', '[x](javascript:alert(1))'],
    ['mixed-case javascript:', '[x](JaVaScRiPt:alert(1))'],
    ['an entity-encoded javascript:', '[x](&#106;avascript:alert(1))'],
    ['a tab inside the scheme', '[x](java&#9;script:alert(1))'],
    ['vbscript:', '[x](vbscript:msgbox(1))'],
    ['data: HTML', '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
    ['a data: image', '![x](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)'],
    ['a protocol-relative address', '[x](//evil.example/)'],
    ['an autolink with javascript:', '<javascript:alert(1)>'],
    ['a reference-style javascript: link', '[x][r]\n\n[r]: javascript:alert(1)'],
  ])('renders no link or image a browser would follow outside http(s) for %s', (_, source) => {
    const page = rendered(source);
    const addresses = [...page.matchAll(/(?:href|src)="([^"]*)"/g)].map((found) => found[1] as string);
    // Resolved as a browser resolves them (entities decoded), every address stays on http(s).
    const decoded = addresses.map((address) => address.replaceAll('&amp;', '&'));
    for (const address of decoded) expect(new URL(address, 'https://acme.app.example/').protocol).toMatch(/^https?:$/);
    expect(page).not.toMatch(/<img /);
  });

  it('escapes quotes in link titles and text so no attribute can be broken out of', () => {
    const page = rendered('[a" onmouseover="alert(1)](https://example.com "t\\" onclick=\\"x")');
    // Every attribute value is quoted with its own quotes escaped: the anchor has exactly these three.
    expect(page).toMatch(/<a href="[^"]*" title="[^"]*" rel="[^"]*">[^<]*<\/a>/);
  });
});

describe('isSafeLink', () => {
  it('allows http(s), mailto and relative addresses', () => {
    expect(
      ['https://a.example', 'http://a.example', 'mailto:a@example.com', '/path', 'page#x', '#top'].map(isSafeLink),
    ).toEqual([true, true, true, true, true, true]);
  });
});
