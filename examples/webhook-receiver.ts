/**
 * A webhook receiver for the README's walkthrough: `WEBHOOK_SECRET=whsec_... npx tsx
 * examples/webhook-receiver.ts 4000`. It verifies each delivery the way the vendor SDKs'
 * `verifySignature` does (a lowercase hex HMAC-SHA256, keyed with the secret string, of
 * `v1:{x-amigo-request-timestamp}:{raw body}`, compared in constant time, the timestamp within
 * five minutes) and prints `verified <type>` or `rejected: <why>` for each, then answers 204.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secret = process.env.WEBHOOK_SECRET ?? '';
const port = Number(process.argv[2] ?? 4000);
if (!secret.startsWith('whsec_')) {
  console.error('Set WEBHOOK_SECRET to the secret the destination was created with (whsec_...).');
  process.exit(2);
}

const rejection = (timestamp: string, signature: string, body: string): string | undefined => {
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() - Number(timestamp)) > 5 * 60_000) return 'stale timestamp';
  const expected = createHmac('sha256', secret).update(`v1:${timestamp}:${body}`).digest('hex');
  const given = Buffer.from(signature, 'utf8');
  const wanted = Buffer.from(expected, 'utf8');
  return given.length === wanted.length && timingSafeEqual(given, wanted) ? undefined : 'signature mismatch';
};

createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const why = rejection(
      String(request.headers['x-amigo-request-timestamp'] ?? ''),
      String(request.headers['x-amigo-request-signature'] ?? ''),
      body,
    );
    console.log(why ? `rejected: ${why}` : `verified ${(JSON.parse(body) as { type?: string }).type}`);
    response.writeHead(why ? 401 : 204).end();
  });
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/hook`));
