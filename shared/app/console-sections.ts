/**
 * The console's sections, in the order its navigation lists them. Each is a page of its own under
 * `/console`; a page inside a section (a conversation, a service's diagram) names the section it
 * belongs to, so the navigation marks where the reader is. A new view of the console adds an entry
 * here and names it in `consoleLayout`; an entry naming a `permission` is listed only to callers
 * granted it on some record.
 */
export const consoleSections = [
  { id: 'overview', label: 'Overview', path: '/console' },
  { id: 'dashboard', label: 'Dashboard', path: '/console/dashboard' },
  { id: 'conversations', label: 'Conversations', path: '/console/conversations' },
  // Listed to callers who may read some call.
  { id: 'calls', label: 'Calls', path: '/console/calls', permission: 'Call:GetCall' },
  { id: 'operators', label: 'Operator queue', path: '/console/operator' },
  { id: 'services', label: 'Services', path: '/console/services' },
  { id: 'webhooks', label: 'Webhooks', path: '/console/webhooks' },
  { id: 'simulations', label: 'Simulations', path: '/console/simulations' },
] as const;

export type ConsoleSectionId = (typeof consoleSections)[number]['id'];

export const sectionPath = (id: ConsoleSectionId): string =>
  consoleSections.find((section) => section.id === id)?.path ?? '/console';
