import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP JSON receiver on a free port, as a collector, Jaeger or Langfuse would take
 * traces: it keeps what is posted to `/v1/traces`, spans flattened with their resource. Tests
 * point `OTEL_EXPORTER_OTLP_ENDPOINT` at it (`otlpEnv`) and read what arrived.
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  status: number;
  resource: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

const plainValue = (value: OtlpValue): unknown => {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
};

const attributesOf = (attributes: { key: string; value: OtlpValue }[] = []): Record<string, unknown> =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, plainValue(value)]));

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}

interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

export interface OtlpReceiver {
  endpoint: string;
  spans(): ReceivedSpan[];
  /** Every request body as it arrived, to search for words that must not be there. */
  bodies(): string[];
  stop(): Promise<void>;
}

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const received: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (request.url === '/v1/traces' && request.headers['content-type']?.startsWith('application/json')) {
        bodies.push(body);
        for (const resourceSpans of (JSON.parse(body) as OtlpRequest).resourceSpans ?? []) {
          const resource = attributesOf(resourceSpans.resource?.attributes);
          for (const scope of resourceSpans.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              received.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
                status: span.status?.code ?? 0,
                resource,
              });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    bodies: () => [...bodies],
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
};

/** The variables that send a process's traces to `receiver` as OTLP/HTTP JSON. */
export const otlpEnv = (receiver: OtlpReceiver, serviceName: string): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: serviceName,
});

/**
 * For a unit test file: traces exported to a new receiver, the modules imported after this
 * (`await import(...)`) loaded afresh so that they read the variables (`tracingOn` is read once, on import).
 */
export const exportTracesTo = async (
  stub: (name: string, value: string) => void,
  resetModules: () => void,
  extra: Record<string, string> = {},
): Promise<OtlpReceiver> => {
  const receiver = await startOtlpReceiver();
  for (const [name, value] of Object.entries({ ...otlpEnv(receiver, 'unit-test'), ...extra })) stub(name, value);
  resetModules();
  return receiver;
};
