import MarkdownIt from 'markdown-it';
import { Html } from './html';

/**
 * Organization-authored markdown (onboarding pages). Raw HTML is not recognized (`html: false`:
 * it is shown as text), and links and images may only point at http(s), mailto or relative
 * addresses, so no `javascript:`, `data:` or other scheme reaches the page.
 */
const renderer = new MarkdownIt({ html: false, linkify: true });

const scheme = /^([a-z][a-z0-9+.-]*):/i;
const allowedSchemes = new Set(['http', 'https', 'mailto']);

/** Whether a link destination (as markdown-it decoded it) is safe to render. */
export const isSafeLink = (url: string): boolean => {
  // Browsers ignore control characters and whitespace inside a scheme (`java\tscript:`).
  const compact = [...url]
    .filter((character) => character > ' ' && (character < '\u007f' || character > '\u009f'))
    .join('');
  const found = scheme.exec(compact);
  if (found) return allowedSchemes.has((found[1] as string).toLowerCase());
  // Protocol-relative addresses leave the site with the page's scheme; they are links, not paths.
  return !compact.startsWith('//') && !compact.startsWith('\\\\') && !compact.startsWith('/\\');
};

renderer.validateLink = isSafeLink;

const defaultLinkOpen =
  renderer.renderer.rules.link_open ??
  ((tokens, index, options, _env, self) => self.renderToken(tokens, index, options));
renderer.renderer.rules.link_open = (tokens, index, options, env, self) => {
  const token = tokens[index];
  // Links open away from the app without handing it the opener or the referrer.
  token?.attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLinkOpen(tokens, index, options, env, self);
};

export const renderMarkdown = (source: string): Html => new Html(renderer.render(source));
