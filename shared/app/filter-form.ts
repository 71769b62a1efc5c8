import { type Html, html } from './html';

/** What the console's filtered lists (the conversation search, the calls) share: their form's fields and their pages' links. */

/** A labelled field of a filter form. */
export const field = (label: string, control: Html, id: string): Html =>
  html`<div><label for="${id}">${label}</label>${control}</div>`;

/** A select of `options` ([value, label]), `value` selected. */
export const choice = (id: string, value: string | undefined, options: [string, string][]): Html =>
  html`<select id="${id}" name="${id}">${options.map(
    ([optionValue, label]) =>
      html`<option value="${optionValue}"${(value ?? '') === optionValue ? html` selected` : ''}>${label}</option>`,
  )}</select>`;

/** The link to another page of the same filters. */
export const pageLink = (action: string, query: object, token: number): string => {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, continuation_token: token } as Record<string, unknown>))
    if (value !== undefined && value !== '' && !(name === 'continuation_token' && value === 0))
      parameters.set(name, String(value));
  const search = parameters.toString();
  return search ? `${action}?${search}` : action;
};

/** The pager under a list: back to its first page, on to the next. */
export const pager = (action: string, query: object, offset: number, next: number | null): Html =>
  html`<nav class="pager" aria-label="Pages">${offset > 0 ? html`<a href="${pageLink(action, query, 0)}">First page</a>` : ''}${
    next !== null ? html`<a href="${pageLink(action, query, next)}">Next page</a>` : ''
  }</nav>`;
