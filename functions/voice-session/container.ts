import { createServer } from 'node:http';

/**
 * The voice session container's process (`infra/constructs/voice-sessions.ts`): an HTTP server on
 * PORT (8080) answering the health check (`GET /ping`, as AgentCore and the load balancer ask).
 */
const port = Number(process.env.PORT ?? 8080);

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/ping') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ status: 'Healthy' }));
    return;
  }
  response.writeHead(404, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ detail: 'Not Found' }));
});

server.listen(port, '0.0.0.0');
