/** Markup that is already safe to put in a page: escaped text or trusted templates. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (character) => entities[character] ?? '');

const render = (value: unknown): string => {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
};

/**
 * A template whose interpolated values are escaped unless they are `Html` already, so page
 * code never concatenates raw strings into markup.
 */
export const html = (strings: TemplateStringsArray, ...values: unknown[]): Html =>
  new Html(
    strings.reduce((text, piece, index) => text + piece + (index < values.length ? render(values[index]) : ''), ''),
  );
