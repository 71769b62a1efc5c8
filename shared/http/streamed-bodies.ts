import { Readable } from 'node:stream';
import { logger } from '../aws/observability';
import { DomainError } from '../kernel/errors';

/**
 * The bodies a streaming endpoint group answers with (`streamHandler` in http-handler.ts): NDJSON
 * events, a JSON document whose items keep flowing, and a body primed with its first chunk. Each
 * ends well formed when its producer fails after the status was sent.
 */

/**
 * What a client is told of a failure after its status was sent: a domain error's status and
 * words, anything else as an internal error whose details stay in the log.
 */
const lateFailure = (error: unknown): { status: number; detail: string } => {
  if (error instanceof DomainError) {
    logger.warn('stream ended by a failure after its status', { error });
    return { status: error.statusCode, detail: error.message };
  }
  logger.error('stream failed after its status was sent', { error: error as Error });
  return { status: 500, detail: 'Internal server error.' };
};

/**
 * NDJSON lines, each written as soon as the operation yields it. A failure after the first
 * line ends the stream with the reference's `error` event, so the client reads why it ended.
 */
export const ndjson = (events: AsyncIterable<unknown>): Readable =>
  Readable.from(
    (async function* () {
      let started = false;
      try {
        for await (const event of events) {
          started = true;
          yield `${JSON.stringify(event)}\n`;
          // Give the write an event-loop turn to leave before the producer's next steps run;
          // otherwise the last piece of a message waits behind the work that follows it.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (error) {
        // Before the first line, the status is not sent yet: the handler answers with it.
        if (!started) throw error;
        // The reader stopped (the client disconnected), which is no failure: nobody reads an error event.
        if (error instanceof Error && error.name === 'AbortError') return;
        const { status, detail } = lateFailure(error);
        yield `${JSON.stringify({ type: 'error', http_error_code: status, error_description: detail })}\n`;
      }
    })(),
    { objectMode: false },
  );

/**
 * `{"<key>":[...]}`, each item written as soon as `items` yields it: one JSON document whose
 * bytes keep flowing while a long answer is made, so its stream does not idle out. A failure
 * after the opening still closes the document, with the items so far and `detail` saying why
 * it stopped (`status_code` the status it would have had).
 */
export const jsonArrayDocument = (key: string, items: AsyncIterable<unknown>): Readable =>
  Readable.from(
    (async function* () {
      yield `{${JSON.stringify(key)}:[`;
      let separator = '';
      try {
        for await (const item of items) {
          yield `${separator}${JSON.stringify(item)}`;
          separator = ',';
        }
      } catch (error) {
        const { status, detail } = lateFailure(error);
        yield `],"detail":${JSON.stringify(detail)},"status_code":${status}}`;
        return;
      }
      yield ']}';
    })(),
    { objectMode: false },
  );

/**
 * The body with its first chunk already made: a producer that checks lazily (an async
 * generator's first steps) still fails before the status is sent, and is answered with its own
 * status instead of a 200 that breaks off.
 */
export const primed = async (body: Readable): Promise<Readable> => {
  const chunks = body[Symbol.asyncIterator]();
  const first = await chunks.next();
  return Readable.from(
    (async function* () {
      try {
        if (first.done) return;
        yield first.value;
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
      } finally {
        // A reader that leaves early stops the producer too.
        await chunks.return?.();
      }
    })(),
    { objectMode: false },
  );
};
