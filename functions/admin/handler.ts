import { listModels } from '#shared/admin/models';
import { adminOperations } from '#shared/admin/operations';
import { submitSqlQuery } from '#shared/admin/sql-query';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { config } from '#shared/kernel/config';

/** The OpenAPI document describes every operation: the whole route table loads only when it is asked for. */
const describeApi = async () => {
  const [{ openApiDocument }, { routeTable }, { socketOperations }] = await Promise.all([
    import('#shared/api/openapi'),
    import('#shared/api/route-table'),
    import('#shared/api/socket-operations'),
  ]);
  // The sockets (the voice session, Twilio's media stream) as platform extensions beside the routes.
  return openApiDocument([...routeTable, ...socketOperations], {
    title: 'Classic conversational agent API',
    version: '0.1.0',
  });
};

let document: ReturnType<typeof describeApi> | undefined;

export const handler = httpHandler(
  implementGroup('admin', [adminOperations], {
    ping: async () => ({ in_maintenance_mode: config.maintenanceMode }),
    'get-openapi-document': () => {
      document ??= describeApi();
      return document;
    },
    'get-models': ({ path, caller }) => listModels(path.organization, caller),
    'submit-sql-query': ({ path, body, caller }) => submitSqlQuery(path.organization, caller, body),
  }),
);
