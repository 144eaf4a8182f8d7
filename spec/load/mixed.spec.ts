/**
 * The short version of the mixed-era load (spec/load/mixed.ts): 40 clients, half modern and half
 * legacy, 10 calls each with MRTR rounds among them, through one wrap over HTTP.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMixedLoad } from './mixed.ts';

const load = suite('mixed-era load through one wrap');

load('should answer every call of every client correctly and leave nothing behind', async () => {
  const report = await runMixedLoad({ clients: 40, callsPerClient: 10 });
  assert.equal(report.wrong, []);
  assert.is(report.calls, 400);
  assert.is(report.rounds, 80);
  assert.equal(report.left, { parked: 0, inFlight: 0, holds: 0, legacySessions: 0 });
});

load.run();
