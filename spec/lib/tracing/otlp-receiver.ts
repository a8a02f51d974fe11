/**
 * An OTLP/HTTP trace receiver on loopback, as a collector would be: it
 * takes what the service's exporter POSTs to `/v1/traces` in the JSON
 * protocol (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and keeps each body
 * as sent and each span decoded.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The resource's attributes (service.name, …). */
  resource: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpAttribute[];
        status?: { code?: number };
      }>;
    }>;
  }>;
}

const valueOf = ({ stringValue, intValue, boolValue, doubleValue }: OtlpValue) =>
  stringValue ?? (intValue === undefined ? undefined : Number(intValue)) ?? boolValue ?? doubleValue ?? "";

const attributesOf = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)])) as ReceivedSpan["attributes"];

export interface OtlpReceiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  /** Every request body as it arrived. */
  bodies: string[];
  /** Every span of every request. */
  spans(): ReceivedSpan[];
  /** The paths and content types requests came with. */
  requests: Array<{ path: string | undefined; contentType: string | undefined }>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({ path: req.url, contentType: req.headers["content-type"] });
      bodies.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const spans = () =>
    bodies.flatMap((body) =>
      ((JSON.parse(body) as OtlpTraces).resourceSpans ?? []).flatMap((resourceSpans) =>
        (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
          (scope.spans ?? []).map((span): ReceivedSpan => ({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? "",
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            statusCode: span.status?.code ?? 0,
            resource: attributesOf(resourceSpans.resource?.attributes),
          })),
        ),
      ),
    );
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    requests,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
