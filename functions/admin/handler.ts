import { openApiOperation, pingOperation } from '#shared/admin/operations';
import { openApiDocument } from '#shared/api/openapi';
import { routeTable } from '#shared/api/route-table';
import { config } from '#shared/kernel/config';
import { httpHandler, implement } from '#shared/http/http-handler';

let document: ReturnType<typeof openApiDocument> | undefined;

export const handler = httpHandler([
  implement(pingOperation, async () => ({ in_maintenance_mode: config.maintenanceMode })),
  implement(openApiOperation, async () => {
    document ??= openApiDocument(routeTable, { title: 'Classic conversational agent API', version: '0.1.0' });
    return document;
  }),
]);
