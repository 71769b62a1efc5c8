import type { Caller } from '../kernel/caller';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../kernel/errors';
import { getBrandingImage } from '../organization/index';
import { getOrganizationView } from '../organization/organizations';
import { getRoleByName } from '../role/index';
import type { ConsoleSectionId } from './console-sections';
import { type Html, html } from './html';
import { type AppRequest, type Branding, layout } from './layout';

/** What every page of the app is made of: branding, the sign-in page, the console's gate. */

export const brandingOf = async (orgId: string) => {
  const organization = await getOrganizationView(orgId, undefined);
  return { organization, branding: { title: organization.title ?? organization.org_name } };
};

export const csrfField = (request: AppRequest): Html =>
  html`<input type="hidden" name="csrf_token" value="${request.csrfToken}">`;

/** `2026-05-01 14:03` (UTC, as stored). */
export const when = (iso: string): string => iso.slice(0, 16).replace('T', ' ');

export const percentOf = (rate: number): string => `${Math.round(rate * 100)}%`;

export const signInPage = async (request: AppRequest, notice?: string): Promise<Html> => {
  const { organization, branding } = await brandingOf(request.orgId);
  const [logo, headshot] = await Promise.all([
    getBrandingImage(request.orgId, 'logo'),
    getBrandingImage(request.orgId, 'signup_page_headshot'),
  ]);
  const { base } = request;
  return layout(
    request,
    branding,
    `Sign in to ${branding.title}`,
    html`<div class="signin"><div>
${logo ? html`<img class="logo" src="${base}/branding/logo" alt="${organization.org_name} logo" width="400" height="160">` : ''}
${organization.main_description ? html`<p class="lead">${organization.main_description}</p>` : ''}
${organization.sub_description ? html`<p class="muted">${organization.sub_description}</p>` : ''}
${notice ? html`<p role="status"><strong>${notice}</strong></p>` : ''}
<form method="post" action="${base}/sign-in">${csrfField(request)}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">E-mail me a sign-in link</button>
</form></div>
${headshot ? html`<img class="headshot" src="${base}/branding/signup_page_headshot" alt="">` : ''}
</div>`,
  );
};

export const signedIn = (request: AppRequest): Caller => {
  if (!request.caller) throw new UnauthorizedError();
  return request.caller;
};

/** Whether the caller's role opens the console: its `frontend_view` is admin. */
export const opensConsole = async (orgId: string, caller: Caller | undefined): Promise<boolean> =>
  caller !== undefined && (await getRoleByName(orgId, caller.roleName))?.frontend_view === 'admin';

export const requireConsole = (request: AppRequest): Caller => {
  const caller = signedIn(request);
  if (!request.consoleAllowed) throw new ForbiddenError("The console is for roles whose frontend_view is 'admin'.");
  return caller;
};

/** A section the caller may not read says so instead of failing the page. */
export const orNotPermitted = async (read: () => Promise<Html>): Promise<Html> =>
  read().catch((error: unknown) => {
    if (error instanceof ForbiddenError || error instanceof NotFoundError)
      return html`<p class="muted">Your role may not see this.</p>`;
    throw error;
  });

/** What a console page shows: its heading and content, in its section. */
export interface ConsoleContent {
  heading: string;
  content: Html;
  section: ConsoleSectionId;
  wide?: boolean;
}

/**
 * A console page: the sign-in page for a visitor, 403 for a role whose `frontend_view` is not
 * admin, else `render`'s content with the organization's branding and the console's navigation.
 */
export const consolePage =
  (render: (request: AppRequest, caller: Caller) => Promise<ConsoleContent>) =>
  async (request: AppRequest): Promise<Html> => {
    if (!request.caller) return signInPage(request);
    const caller = requireConsole(request);
    const [{ branding }, page] = await Promise.all([brandingOf(request.orgId), render(request, caller)]);
    return consoleLayout(request, branding, page);
  };

export const consoleLayout = (request: AppRequest, branding: Branding, page: ConsoleContent): Html =>
  layout(request, branding, page.heading, page.content, { section: page.section, wide: page.wide });
