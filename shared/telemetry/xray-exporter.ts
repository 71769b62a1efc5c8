import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * CloudWatch's OTLP traces endpoint (`https://xray.<region>.amazonaws.com/v1/traces`, the stack's
 * `tracing=otlp`, with Transaction Search on): OTLP/HTTP protobuf like any collector, but each
 * request signed with SigV4 (service `xray`, authorized as `xray:PutTraceSegments`) with the
 * function's own credentials. The OTLP exporters send no signature, so this one sends its
 * batches itself.
 */
const xrayHost = /^xray\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;

export const xrayOtlpEndpoint = (endpoint: string): boolean => {
  try {
    const url = new URL(endpoint);
    return url.protocol === 'https:' && xrayHost.test(url.hostname);
  } catch {
    return false;
  }
};

type SourceData = string | ArrayBuffer | ArrayBufferView;

const bytesOf = (data: SourceData): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** SHA-256 (and its HMAC) for the signer, from Node's crypto. */
class Sha256 {
  private hash: Hash | Hmac;
  private readonly secret: string | Uint8Array | undefined;
  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : bytesOf(secret);
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

/** The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, or `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`. */
const tracesUrl = (env: NodeJS.ProcessEnv): URL =>
  env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    ? new URL(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    : new URL(`${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').replace(/\/+$/, '')}/v1/traces`);

export const signedXrayExporter = (env: NodeJS.ProcessEnv = process.env): SpanExporter => {
  const url = tracesUrl(env);
  const signer = new SignatureV4({
    service: 'xray',
    region: xrayHost.exec(url.hostname)?.[1] ?? env.AWS_REGION ?? '',
    credentials: defaultProvider(),
    sha256: Sha256,
  });
  const sending = new Set<Promise<void>>();
  const send = async (body: Uint8Array): Promise<void> => {
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      query: {},
      headers: { host: url.hostname, 'content-type': 'application/x-protobuf' },
      body,
    });
    const response = await fetch(url, {
      method: 'POST',
      headers: signed.headers,
      body,
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok)
      throw new Error(`the X-Ray OTLP endpoint answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  };
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
      const body = ProtobufTraceSerializer.serializeRequest(spans);
      if (!body) {
        done({ code: ExportResultCode.SUCCESS });
        return;
      }
      const sent = send(body);
      sending.add(sent);
      sent.then(
        () => done({ code: ExportResultCode.SUCCESS }),
        (error: unknown) =>
          done({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) }),
      );
      sent.catch(() => undefined).finally(() => sending.delete(sent));
    },
    forceFlush: async () => {
      await Promise.allSettled(sending);
    },
    shutdown: async () => {
      await Promise.allSettled(sending);
    },
  };
};
