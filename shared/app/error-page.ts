import { config } from '../kernel/config';
import type { ValidationIssue } from '../kernel/errors';
import { type Html, html } from './html';
import { layout } from './layout';
import { appHostHeader, appLocation } from './organization-host';

/** A failure as the HTTP layer maps it: its status and what it says. */
export interface PageFailure {
  statusCode: number;
  detail: string | ValidationIssue[];
}

const headings: Record<number, string> = {
  400: 'That request could not be used',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Page not found',
  405: 'Page not found',
  408: 'That took too long',
  409: 'That could not be done now',
  413: 'That is too large',
  415: 'That kind of file is not accepted',
  422: 'Please check what you entered',
  429: 'Too many requests',
  503: 'Down for maintenance',
};

const headingOf = (status: number): string =>
  headings[status] ?? (status >= 500 ? 'Something went wrong' : 'That did not work');

/** `body.email` → `E-mail`: the form field an issue is about, as a person reads it. */
const fieldOf = (issue: ValidationIssue): string => {
  const field = String(issue.loc.at(-1) ?? '');
  return field === 'email' ? 'E-mail address' : field.replaceAll('_', ' ');
};

const explanationOf = (failure: PageFailure): Html => {
  if (typeof failure.detail === 'string') {
    // An address the app has no page at says so in words, not in the router's.
    const noPage = failure.statusCode === 405 || (failure.statusCode === 404 && failure.detail === 'Not found.');
    return html`<p>${noPage ? 'There is no page at this address.' : failure.detail}</p>`;
  }
  return html`<ul>${failure.detail.map((issue) => html`<li><strong>${fieldOf(issue)}</strong>: ${issue.msg}</li>`)}</ul>`;
};

/**
 * The web app's failures as pages (a browser never shows raw JSON): what went wrong in words and
 * the way back home. It reads nothing (a failure may be the store's), so it shows no branding.
 */
export const errorPage = (
  failure: PageFailure,
  request: { url: URL; headers: Record<string, string>; pathParameters: Record<string, string | undefined> },
): string => {
  const orgId = request.pathParameters.organization ?? '';
  const { base } = appLocation(request.url, orgId, request.headers[appHostHeader], config.frontendDomain);
  const signIn = failure.statusCode === 401;
  return layout(
    { orgId, base, caller: undefined, csrfToken: '', consoleAllowed: false },
    { title: 'Home' },
    headingOf(failure.statusCode),
    html`${explanationOf(failure)}
<p><a href="${base}/">${signIn ? 'Go to the sign-in page' : 'Back to the home page'}</a></p>`,
  ).text;
};
