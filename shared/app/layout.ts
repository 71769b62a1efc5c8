import type { Caller } from '../kernel/caller';
import { Html, html } from './html';
import { palette } from './palette';

/** What every page needs to know about the request it answers. */
export interface AppRequest {
  orgId: string;
  /** The app's base path: `` on its own host, `/app/{org_id}` under the API (with its stage). */
  base: string;
  /** `https://acme.example.com`: where links in e-mails point. */
  origin: string;
  caller: Caller | undefined;
  /** The token forms carry (signed over the browser's CSRF nonce). */
  csrfToken: string;
  /** Whether the caller's role opens the console (`frontend_view` admin). */
  consoleAllowed: boolean;
}

export interface Branding {
  title: string;
}

const styles = `
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:${palette.text};background:${palette.page}}
a{color:${palette.accent}}
header{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;padding:.75rem 1.5rem;border-bottom:1px solid ${palette.border}}
header .title{font-weight:600;margin-right:auto;color:${palette.text};text-decoration:none}
header form{margin:0}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
.muted{color:${palette.muted}}
.error{color:${palette.error}}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input,select,textarea{font:inherit;color:${palette.text};background:${palette.page};border:1px solid ${palette.border};border-radius:6px;padding:.5rem;width:100%;max-width:32rem}
input[type=checkbox]{width:auto}
textarea{min-height:4.5rem}
button,.button{font:inherit;font-weight:600;color:${palette.onAccent};background:${palette.accent};border:0;border-radius:6px;padding:.5rem 1rem;cursor:pointer;margin-top:.75rem}
button.link{color:${palette.accent};background:none;padding:0;margin:0;text-decoration:underline}
button:disabled{opacity:.7}
:focus-visible{outline:3px solid ${palette.accent};outline-offset:2px}
.signin{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:2rem;align-items:start}
.signin img.headshot{width:220px;border-radius:8px}
img.logo{max-width:300px;height:auto}
.transcript{list-style:none;padding:0;display:flex;flex-direction:column;gap:.5rem}
.message{padding:.5rem .75rem;border-radius:10px;max-width:80%;white-space:pre-wrap}
.message.agent{background:${palette.bubble};align-self:flex-start}
.message.user{background:${palette.accent};color:${palette.onAccent};align-self:flex-end}
.card{border:1px solid ${palette.border};border-radius:8px;padding:1rem;margin:1rem 0}
.card h3{margin-top:0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid ${palette.border};vertical-align:top}
pre{white-space:pre-wrap;background:${palette.bubble};padding:.5rem;border-radius:6px}
.diagram-wrap{overflow-x:auto}
.simulated-legend{color:${palette.simulated};border:2px dashed ${palette.simulated};padding:0 .2rem}
`;

/** The page shell: branding, navigation for a signed-in user, the content, the script. */
export const layout = (request: AppRequest, branding: Branding, heading: string, content: Html): Html => {
  const { base, caller } = request;
  const navigation = caller
    ? html`<nav aria-label="Main"><a href="${base}/">Chat</a> · <a href="${base}/onboarding">Onboarding</a> · <a href="${base}/preferences">Preferences</a>${
        request.consoleAllowed ? html` · <a href="${base}/console">Console</a>` : ''
      }</nav><form method="post" action="${base}/sign-out"><input type="hidden" name="csrf_token" value="${request.csrfToken}"><button class="link" type="submit">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${heading} · ${branding.title}</title>
<link rel="icon" href="${base}/favicon.ico">
<style>${new Html(styles)}</style>
<script src="${base}/app.js" defer></script>
</head><body>
<header><a class="title" href="${base}/">${branding.title}</a>${navigation}</header>
<main><h1>${heading}</h1>${content}</main>
</body></html>`;
};
