import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One OTLP/HTTP export as received: its path, content type and JSON body. */
export interface OtlpExport {
  path: string;
  contentType: string;
  body: OtlpBody;
}

/** An OTLP attribute in the JSON encoding. */
export interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}

/** A span in the OTLP JSON encoding (the fields the tests read). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: OtlpAttribute[];
  /** `code` 2 is ERROR. */
  status?: { code?: number; message?: string };
  links?: { traceId: string; spanId: string }[];
}

/** The body of an OTLP/HTTP JSON export (traces or metrics). */
export interface OtlpBody {
  resourceSpans?: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string; version?: string }; spans: OtlpSpan[] }[];
  }[];
  resourceMetrics?: { scopeMetrics: { scope: { name: string }; metrics: { name: string }[] }[] }[];
}

/** A span as received, with its scope and resource. */
export type ReceivedSpan = OtlpSpan & {
  scope: { name: string; version?: string };
  resource: { attributes: OtlpAttribute[] };
};

/** An OTLP/HTTP receiver on loopback, keeping every export it got. */
export interface OtlpReceiver {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT`: `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** The exports so far, oldest first. */
  exports: OtlpExport[];
  /** Every span of the trace exports so far. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/**
 * Starts an OTLP/HTTP receiver on 127.0.0.1 (a free port) that answers every export with 200.
 *
 * @returns the receiver
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: OtlpExport[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? '';
      const text = Buffer.concat(chunks).toString('utf8');
      exports.push({
        path: request.url ?? '',
        contentType,
        body: contentType.includes('json') ? (JSON.parse(text) as OtlpBody) : {},
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans: () =>
      exports
        .filter((e) => e.path === '/v1/traces')
        .flatMap((e) =>
          (e.body.resourceSpans ?? []).flatMap((resource) =>
            resource.scopeSpans.flatMap((scope) =>
              scope.spans.map((span) => ({ ...span, scope: scope.scope, resource: resource.resource })),
            ),
          ),
        ),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The value of an OTLP attribute (string, integer or boolean), or undefined.
 *
 * @param attributes - a span's or resource's attributes
 * @param key - the attribute
 */
export function attribute(attributes: readonly OtlpAttribute[], key: string): unknown {
  const found = attributes.find((a) => a.key === key)?.value;
  return found?.stringValue ?? found?.intValue ?? found?.boolValue;
}
