/**
 * An OpenTelemetry SDK registered after another was disabled (a program that restarts its
 * telemetry, or tests that each register their own) records our spans: nothing of the first is
 * kept, neither whether an SDK records nor the tracer it gave.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { observe } from '../../lib/observe/requestTelemetry.ts';
import { tracingRegistered } from '../../lib/observe/requestSpan.ts';

const reregistered = suite('an SDK registered again');

function served(id: number): void {
  const telemetry = observe(
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {} } },
    { transport: 'pipe', clientEra: 'modern', serverEra: 'legacy' },
  );
  telemetry?.end({ jsonrpc: '2.0', id, result: { content: [] } });
}

function register(): { exporter: InMemorySpanExporter; stop(): Promise<void> } {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return {
    exporter,
    async stop() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

reregistered('should record into whichever SDK is registered now, and nothing once none is', async () => {
  assert.is(tracingRegistered(), false);
  const first = register();
  served(1);
  assert.is(first.exporter.getFinishedSpans().length, 1);
  await first.stop();
  assert.is(tracingRegistered(), false);
  served(2);
  const second = register();
  served(3);
  assert.equal(
    second.exporter.getFinishedSpans().map((s) => s.attributes['jsonrpc.request.id']),
    ['3'],
  );
  assert.is(first.exporter.getFinishedSpans().length, 0, 'the first SDK, shut down, got nothing more');
  await second.stop();
});

reregistered.run();
