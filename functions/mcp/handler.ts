import { implementGroup, streamHandler } from '#shared/http/http-handler';
import { answerMcpRequest } from '#shared/mcp/mcp-server';
import { mcpOperations } from '#shared/mcp/operations';

export const handler = streamHandler(
  implementGroup('mcp', [mcpOperations], {
    'send-mcp-message': async ({ path, headers, caller, context }) => {
      const answer = await answerMcpRequest(path.organization, caller, {
        url: context.url,
        headers: {
          accept: headers.accept,
          'content-type': headers['content-type'],
          'mcp-protocol-version': headers['mcp-protocol-version'],
        },
        body: context.rawBody,
      });
      return { bytes: answer.body, status: answer.status, headers: answer.headers, settled: answer.settled };
    },
  }),
);
