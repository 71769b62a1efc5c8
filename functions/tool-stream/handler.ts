import { implementGroup, streamHandler } from '#shared/http/http-handler';
import { jsonArrayDocument } from '#shared/http/streamed-bodies';
import { invokeToolVersion } from '#shared/tool/invocations';
import { toolOperations } from '#shared/tool/operations';
import { testTool } from '#shared/tool/test-runs';

export const handler = streamHandler(
  implementGroup('tool-stream', [toolOperations], {
    'test-tool': async ({ path, body, caller }) => ({
      bytes: jsonArrayDocument('invocation_results', await testTool(path.organization, caller, body)),
    }),
    'invoke-tool-version': async ({ path, body, caller }) => ({
      bytes: jsonArrayDocument(
        'invocation_results',
        await invokeToolVersion(path.organization, caller, path.tool_id, path.version, body.inputs),
      ),
    }),
  }),
);
