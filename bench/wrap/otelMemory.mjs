/**
 * Preloaded (`node --import`) into the wrap bench's observed front: the OpenTelemetry SDK for
 * Node registered as a user would (W3C propagation, async-hooks context), spans batched to an
 * in-memory exporter that is emptied every second (what is measured is recording and
 * exporting them, not a growing heap).
 */
import { BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
provider.register();
setInterval(() => exporter.reset(), 1000).unref();
