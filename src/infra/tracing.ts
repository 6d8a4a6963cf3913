// OpenTelemetry tracing, switched on by the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_SERVICE_NAME; the exporter reads its own headers and
// protocol settings). Spans go out over OTLP/HTTP. The Temporal SDK's OpenTelemetry plugin carries
// the trace from the API's HTTP span into the workflow, its children and every activity.
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config';

export interface Tracing {
  /** For the Temporal client, the workers and the workflow bundle. */
  plugin: OpenTelemetryPlugin;
  /** Sends what is still buffered. */
  shutdown(): Promise<void>;
}

let installed: Tracing | undefined;

/** Installs tracing once per process when the configuration asks for it; undefined otherwise. */
export function startTracing(config: Pick<Config, 'tracing'>): Tracing | undefined {
  if (!config.tracing.enabled) return undefined;
  if (installed) return installed;
  const resource = new Resource({ 'service.name': config.tracing.serviceName });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 1_000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global tracer, W3C trace-context propagation and an AsyncLocalStorage context manager.
  provider.register();
  installed = {
    plugin: new OpenTelemetryPlugin({ resource, spanProcessor }),
    shutdown: () => provider.shutdown(),
  };
  return installed;
}
