import { createServer } from 'node:http';
import { logger } from '#shared/aws/observability';
import { createSessionSockets } from './sockets';

/**
 * The voice session container's process (`infra/constructs/voice-sessions.ts`): an HTTP server on
 * PORT (8080) that answers the health check (`GET /ping`, as the load balancer and AgentCore ask)
 * and upgrades the sessions' sockets: the browser's and Twilio's on the paths `npm start` serves
 * them on, and AgentCore's `/ws`, the browser protocol with its organization as a query parameter
 * (`/ws?organization=acme&service_id=…`).
 */
const port = Number(process.env.PORT ?? 8080);
const sockets = createSessionSockets({ log: (line) => logger.warn(line) });

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/ping') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ status: 'Healthy' }));
    return;
  }
  response.writeHead(404, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ detail: 'Not Found' }));
});

server.on('upgrade', (request, socket, head) => sockets.handleUpgrade(request, socket, head));

// A promise nothing awaited that failed is a bug to log, not a reason to end every call of the task.
process.on('unhandledRejection', (reason) => {
  logger.error('unhandled rejection', { error: reason instanceof Error ? reason : new Error(String(reason)) });
});

// A deployment stops the task: the sockets close (their conversations stay resumable), then the server.
process.once('SIGTERM', () => {
  void sockets.close().finally(() => server.close(() => process.exit(0)));
});

server.listen(port, '0.0.0.0');
