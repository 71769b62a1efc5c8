import { listModels } from '#shared/admin/models';
import { submitSqlQuery } from '#shared/admin/sql-query';
import { openApiDocument } from '#shared/api/openapi';
import { routeTable } from '#shared/api/route-table';
import { socketOperations } from '#shared/api/socket-operations';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { config } from '#shared/kernel/config';

let document: ReturnType<typeof openApiDocument> | undefined;

export const handler = httpHandler(
  implementGroup('admin', {
    ping: async () => ({ in_maintenance_mode: config.maintenanceMode }),
    'get-openapi-document': async () => {
      document ??= openApiDocument([...routeTable, ...socketOperations], {
        title: 'Classic conversational agent API',
        version: '0.1.0',
      });
      return document;
    },
    'get-models': ({ path, caller }) => listModels(path.organization, caller),
    'submit-sql-query': ({ path, body, caller }) => submitSqlQuery(path.organization, caller, body),
  }),
);
