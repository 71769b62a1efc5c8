import type { Caller } from '../kernel/caller';
import { holdsAnyGrantOf } from '../kernel/permissions';
import { type ConsoleSectionId, consoleSections } from './console-sections';
import { Html, html } from './html';
import { palette } from './palette';

/** What every page needs to know about the request it answers. */
export interface AppRequest {
  orgId: string;
  /** The app's base path: `` on its own host, `/app/{org_id}` under the API (with its stage). */
  base: string;
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
header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.75rem 1.5rem;border-bottom:1px solid ${palette.border}}
header .title{font-weight:600;margin-right:auto;color:${palette.text};text-decoration:none}
header form{margin:0}
header nav ul,.sections ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0;padding:0}
.sections{padding:.5rem 1.5rem;border-bottom:1px solid ${palette.border};background:${palette.bubble}}
[aria-current=page]{font-weight:700;color:${palette.text}}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
main.wide{max-width:76rem}
h1{font-size:1.75rem;line-height:1.25;overflow-wrap:anywhere}
h2{font-size:1.35rem}
h3{font-size:1.1rem}
.muted{color:${palette.muted}}
.error{color:${palette.error}}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input,select,textarea{font:inherit;color:${palette.text};background:${palette.page};border:1px solid ${palette.border};border-radius:6px;padding:.5rem;width:100%;max-width:32rem}
input[type=checkbox]{width:auto}
textarea{min-height:4.5rem}
button,.button{font:inherit;font-weight:600;color:${palette.onAccent};background:${palette.accent};border:0;border-radius:6px;padding:.5rem 1rem;cursor:pointer;margin-top:.75rem;display:inline-block;text-decoration:none}
button.link{color:${palette.accent};background:none;padding:0;margin:0;text-decoration:underline}
button:disabled{opacity:.7}
:focus-visible{outline:3px solid ${palette.accent};outline-offset:2px}
.signin{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:2rem;align-items:start}
.signin img.headshot{width:220px;max-width:100%;border-radius:8px}
img.logo{max-width:100%;height:auto}
.transcript{list-style:none;padding:0;display:flex;flex-direction:column;gap:.5rem}
.message{padding:.5rem .75rem;border-radius:10px;max-width:80%;white-space:pre-wrap;overflow-wrap:anywhere}
.message.agent{background:${palette.bubble};align-self:flex-start}
.message.user{background:${palette.accent};color:${palette.onAccent};align-self:flex-end}
.card{border:1px solid ${palette.border};border-radius:8px;padding:1rem;margin:1rem 0}
.card h3{margin-top:0}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem}
.figure{font-size:1.6rem;font-weight:700;margin:0}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid ${palette.border};vertical-align:top}
td.number,th.number{text-align:right;white-space:nowrap}
td.when{white-space:nowrap}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:${palette.bubble};padding:.5rem;border-radius:6px;margin:.25rem 0}
.diagram-wrap{overflow-x:auto}
.simulated-legend{color:${palette.simulated};border:2px dashed ${palette.simulated};padding:0 .2rem}
.badge{display:inline-block;border:1px solid currentColor;border-radius:999px;padding:0 .5rem;font-size:.875rem;font-weight:600;margin-right:.25rem}
.badge.simulated{color:${palette.simulated}}
.badge.operator{color:${palette.operator}}
.badge.escalated{color:${palette.error}}
.summary{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;margin:0;padding:0}
.summary div{margin:0}
.summary dt{font-size:.875rem;color:${palette.muted}}
.summary dd{margin:0;font-weight:600}
.turn{border:1px solid ${palette.border};border-radius:8px;padding:1rem;margin:1rem 0}
.turn.operated{border-left:6px solid ${palette.operator}}
.turn h3{margin:0 0 .5rem}
.turn .bubbles{display:flex;flex-direction:column;gap:.5rem;margin:.5rem 0}
.turn .bubble{padding:.5rem .75rem;border-radius:10px;white-space:pre-wrap;overflow-wrap:anywhere}
.turn .bubble.user{background:${palette.accent};color:${palette.onAccent};margin-left:15%}
.turn .bubble.agent{background:${palette.bubble};margin-right:15%}
.turn .bubble .sender{display:block;font-size:.875rem;font-weight:600}
.turn audio{display:block;width:100%;max-width:24rem;margin-top:.25rem}
.event{border-left:6px solid ${palette.error};padding:.25rem .75rem;margin:1rem 0}
.event.operator{border-left-color:${palette.operator}}
.timeline{list-style:none;padding:0;margin:.5rem 0;display:grid;grid-template-columns:fit-content(14rem) minmax(6rem,1fr) max-content;gap:.3rem .75rem;align-items:center}
.timeline li{display:grid;grid-column:1/-1;grid-template-columns:subgrid;align-items:center}
.timeline .label{overflow-wrap:anywhere}
.timeline .track{position:relative;height:.9rem;background:${palette.bubble};border-radius:3px}
.timeline .bar{position:absolute;top:0;bottom:0;min-width:3px;border-radius:3px;background:${palette.accent}}
.timeline .bar.tool{background:${palette.simulated}}
.timeline .bar.total{background:${palette.border}}
.timeline .value{text-align:right;font-variant-numeric:tabular-nums}
.timeline .bar.entry-agent_speech,.timeline .bar.entry-voicemail{background:${palette.text}}
.timeline .bar.entry-turn{background:${palette.border}}
.timeline .bar.entry-barge_in{background:${palette.error}}
.timeline .bar.entry-dtmf,.timeline .bar.entry-transfer{background:${palette.operator}}
.timeline .bar.entry-status{background:${palette.muted}}
figure.channel{margin:.75rem 0}
figure.channel audio{display:block;width:100%;max-width:32rem;margin-top:.25rem}
details{margin:.5rem 0}
summary{cursor:pointer}
.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:0 1rem;align-items:end}
.filters label{min-height:1.5em}
.filters label{margin-top:.5rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,30rem),1fr));gap:0 1rem}
.chart{margin:1rem 0}
.chart .canvas{position:relative;height:16rem}
.pager{display:flex;gap:1rem;margin:1rem 0}
@media (max-width:40rem){
  header,.sections{padding-left:1rem;padding-right:1rem}
  main{padding:1rem}
  .signin{grid-template-columns:1fr}
  .message{max-width:95%}
  .timeline{display:block}
  .timeline li{display:flex;flex-wrap:wrap;gap:0 .5rem;margin:.4rem 0}
  .timeline .label{flex:1 1 auto}
  .timeline .value{margin-left:auto}
  .timeline .track{flex:0 0 100%;order:3}
  .turn .bubble.user{margin-left:0}
  .turn .bubble.agent{margin-right:0}
}
`;

/** How a page sits in the app: the console section it belongs to, and whether it needs the full width (tables, charts). */
export interface PagePlace {
  section?: ConsoleSectionId;
  wide?: boolean;
}

/** The console's navigation: each section the caller may read, the current one marked for every reader. */
const consoleNavigation = (base: string, current: ConsoleSectionId, caller: Caller): Html =>
  html`<nav class="sections" aria-label="Console"><ul>${consoleSections
    .filter((section) => !('permission' in section) || holdsAnyGrantOf(caller, section.permission))
    .map(
      (section) =>
        html`<li><a href="${base}${section.path}"${section.id === current ? new Html(' aria-current="page"') : ''}>${section.label}</a></li>`,
    )}</ul></nav>`;

/** The page shell: branding, navigation for a signed-in user (and the console's within it), the content, the script. */
export const layout = (
  request: AppRequest,
  branding: Branding,
  heading: string,
  content: Html,
  place: PagePlace = {},
): Html => {
  const { base, caller } = request;
  const link = (path: string, label: string, current: boolean) =>
    html`<li><a href="${base}${path}"${current ? new Html(' aria-current="page"') : ''}>${label}</a></li>`;
  const navigation = caller
    ? html`<nav aria-label="Main"><ul>${link('/', 'Chat', false)}${link('/onboarding', 'Onboarding', false)}${link('/preferences', 'Preferences', false)}${
        request.consoleAllowed ? link('/console', 'Console', place.section !== undefined) : ''
      }</ul></nav><form method="post" action="${base}/sign-out"><input type="hidden" name="csrf_token" value="${request.csrfToken}"><button class="link" type="submit">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${heading} · ${branding.title}</title>
<link rel="icon" href="${base}/favicon.ico">
<style>${new Html(styles)}</style>
<script src="${base}/app.js" defer></script>
</head><body>
<header><a class="title" href="${base}/">${branding.title}</a>${navigation}</header>
${place.section && caller ? consoleNavigation(base, place.section, caller) : ''}<main${place.wide ? new Html(' class="wide"') : ''}><h1>${heading}</h1>${content}</main>
</body></html>`;
};
