import { implementGroup, jsonArrayDocument, streamHandler } from '#shared/http/http-handler';
import { testTool } from '#shared/tool/builder';

export const handler = streamHandler(
  implementGroup('tool-stream', {
    'test-tool': async ({ path, body, caller }) => ({
      bytes: jsonArrayDocument('invocation_results', await testTool(path.organization, caller, body)),
    }),
  }),
);
