/**
 * Preloaded (`node --import`) into the wrap bench's sampled front: the OpenTelemetry SDK for Node
 * registered as a user who traces a tenth of the traffic would, a parent-based sampler at 10%
 * (W3C propagation, async-hooks context), spans batched to an in-memory exporter emptied every
 * second. The bench's requests all carry one `traceparent` marked sampled (one trace id, so a
 * ratio of trace ids would take all or none): the sampler's remote-parent branch takes every
 * tenth request instead, as a caller's own 10% sampler would mark a tenth of them.
 */
import { BatchSpanProcessor, InMemorySpanExporter, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

let seen = 0;
/** Every tenth request, whatever its trace id. */
const everyTenth = {
  shouldSample: () => ({ decision: seen++ % 10 === 0 ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD }),
  toString: () => 'EveryTenth',
};
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1), remoteParentSampled: everyTenth }), spanProcessors: [new BatchSpanProcessor(exporter)] });
provider.register();
setInterval(() => exporter.reset(), 1000).unref();
