/** `conversation-stream` → `ConversationStream`, for construct ids and output names. */
export const pascalCase = (name: string): string =>
  name.replace(/(^|-)([a-z])/g, (_match, _dash: string, letter: string) => letter.toUpperCase());
