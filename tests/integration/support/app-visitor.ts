import { expect } from 'vitest';
import { apiUrl, streamAndDisconnect, streamEvents } from './client';
import { emailsTo } from './identity';

export interface PageAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * A browser's view of the web app over plain HTTP: it keeps the cookies the app sets and
 * reads the CSRF token of the last page, as a browser submitting the page's forms would.
 */
export class AppVisitor {
  readonly cookies = new Map<string, string>();
  csrfToken = '';

  constructor(readonly orgId: string) {}

  get base(): string {
    return `/app/${this.orgId}`;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      if (attributes.some((attribute) => attribute.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private async answer(response: Response): Promise<PageAnswer> {
    this.remember(response);
    const text = await response.text();
    const token = /name="csrf_token" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrfToken = token;
    return { status: response.status, headers: response.headers, text };
  }

  /** A page; `headers` add to the cookies (a browser's navigation sends `accept: text/html`). */
  async get(path: string, headers: Record<string, string> = {}): Promise<PageAnswer> {
    const response = await fetch(apiUrl(`${this.base}${path}`), {
      headers: { cookie: this.cookieHeader(), ...headers },
      redirect: 'manual',
    });
    return this.answer(response);
  }

  /** Posts a form; the page's CSRF token is added unless `csrf_token` is given (even empty). */
  async post(
    path: string,
    fields: Record<string, string> = {},
    headers: Record<string, string> = {},
  ): Promise<PageAnswer> {
    const response = await fetch(apiUrl(`${this.base}${path}`), {
      method: 'POST',
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ csrf_token: this.csrfToken, ...fields }),
      redirect: 'manual',
    });
    return this.answer(response);
  }

  /** Posts a form answered with NDJSON events (the chat). */
  stream(path: string, fields: Record<string, string>) {
    return streamEvents(`${this.base}${path}`, {
      method: 'POST',
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      raw: new URLSearchParams({ csrf_token: this.csrfToken, ...fields }),
    });
  }

  /** Sends a chat message and drops the connection after `dropAfter` events of the reply. */
  sendAndDisconnect(conversationId: string, message: string, dropAfter: number) {
    return streamAndDisconnect(
      `${this.base}/conversations/${conversationId}/messages`,
      {
        method: 'POST',
        headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        raw: new URLSearchParams({ csrf_token: this.csrfToken, message }),
      },
      dropAfter,
    );
  }

  /** Resumes a chat's stream as the page script does after a dropped connection: the CSRF token in a header. */
  streamEventsAfter(conversationId: string, after: string, csrfToken = this.csrfToken) {
    return streamEvents(`${this.base}/conversations/${conversationId}/events`, {
      query: { after },
      headers: { cookie: this.cookieHeader(), 'x-csrf-token': csrfToken },
    });
  }

  /** Posts a recording as the chat's record button does: the raw WAV, the CSRF token in a header. */
  streamRecording(path: string, wav: Uint8Array, query: Record<string, string> = {}, csrfToken = this.csrfToken) {
    return streamEvents(`${this.base}${path}`, {
      method: 'POST',
      query,
      headers: { cookie: this.cookieHeader(), 'content-type': 'audio/wav', 'x-csrf-token': csrfToken },
      raw: wav,
    });
  }
}

/** The sign-in link of the latest e-mail to `address`, waiting for it to arrive. */
export const latestSignInLink = async (address: string, sentBefore: number): Promise<string> => {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const links = (await emailsTo(address))
      .map((message) => /(https?:\/\/\S+\/sign-in\/complete\?token=\S+)/.exec(message.text)?.[1])
      .filter((link): link is string => link !== undefined);
    if (links.length > sentBefore) return links[links.length - 1] as string;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no sign-in link reached ${address}`);
};

export const signInLinkCount = async (address: string): Promise<number> =>
  (await emailsTo(address)).filter((message) => message.text.includes('/sign-in/complete?token=')).length;

/** Signs a user in through the app's own pages and the e-mailed link, as a browser would. */
export const signInToApp = async (orgId: string, email: string): Promise<AppVisitor> => {
  const visitor = new AppVisitor(orgId);
  await visitor.get('/');
  const before = await signInLinkCount(email);
  const requested = await visitor.post('/sign-in', { email });
  expect(requested.status).toBe(200);
  const link = new URL(await latestSignInLink(email, before));
  const completed = await visitor.get(`${link.pathname.slice(visitor.base.length)}${link.search}`);
  expect(completed.status).toBe(303);
  await visitor.get('/');
  return visitor;
};
