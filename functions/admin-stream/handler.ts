import { adminStreamOperations } from '#shared/admin/operations';
import { getPromptLogZip } from '#shared/admin/prompt-logs';
import { implementGroup, streamHandler } from '#shared/http/http-handler';

export const handler = streamHandler(
  implementGroup('admin-stream', [adminStreamOperations], {
    'get-prompt-logs': async ({ path, query, caller, context }) => {
      const bytes = await getPromptLogZip(path.organization, caller, query.prompt_log_prefix);
      context.setHeader('content-disposition', 'attachment; filename="prompt-logs.zip"');
      return { bytes };
    },
  }),
);
