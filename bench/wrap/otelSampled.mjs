/**
 * Preloaded (`node --import`) into the wrap bench's sampled front: the OpenTelemetry SDK for Node
 * registered as a user who traces a tenth of the traffic would, a parent-based sampler at 10%
 * (W3C propagation, async-hooks context), spans batched to an in-memory exporter emptied every
 * second. The bench's requests all carry one `traceparent` marked sampled (one trace id, so a
 * ratio of trace ids would take all or none): the sampler's remote-parent branch takes every
 * tenth request instead, as a caller's own 10% sampler would mark a tenth of them.
 *
 * Two knobs, for reading the cost apart: BENCH_SAMPLE_NONE=1 samples nothing (what remains is the
 * SDK's decision on every request, and ours around it), BENCH_NO_CONTEXT_MANAGER=1 registers no
 * context manager (`provider.register({ contextManager: null })`).
 */
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

let seen = 0;
/** Every tenth request, whatever its trace id. */
const everyTenth = {
  shouldSample: () => ({
    decision: seen++ % 10 === 0 && !process.env.BENCH_SAMPLE_NONE ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
  }),
  toString: () => 'EveryTenth',
};
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1), remoteParentSampled: everyTenth }),
  spanProcessors: [new BatchSpanProcessor(exporter)],
});
provider.register(process.env.BENCH_NO_CONTEXT_MANAGER ? { contextManager: null } : {});
setInterval(() => exporter.reset(), 1000).unref();
