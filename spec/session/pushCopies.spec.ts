import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PushCopies, type CopyVerdict } from '../../lib/session/pushCopies.ts';

const push = { jsonrpc: '2.0' as const, id: 3, method: 'elicitation/create', params: { message: 'What is your name?' } };
const c = suite('PushCopies');
c('should handle a push at once when only one session is open', async () => {
  const copies = new PushCopies(() => 1);
  assert.is(await copies.gather(push, () => 0), 'handle');
  assert.is(copies.size, 0);
});
c('should hand a broadcast push to the one session with a pushable call, and leave the other copies unanswered', async () => {
  const copies = new PushCopies(() => 3, 10);
  const verdicts = await Promise.all([copies.gather(push, () => 0), copies.gather(push, () => 1), copies.gather(push, () => 0)]);
  assert.equal(verdicts, ['drop', 'handle', 'drop']);
  assert.is(copies.size, 0, 'nothing kept');
});
c('should handle alike pushes of calls alike that reached only the sessions of those calls while others are open', async () => {
  // Two sessions of four, each with a call that pushes the same request under the same id (a
  // server instance per session counts its ids from 0): not copies of one push.
  const copies = new PushCopies(() => 4, 10);
  assert.equal(await Promise.all([copies.gather(push, () => 1), copies.gather(push, () => 1)]), ['handle', 'handle']);
  // The same reaching every open session, some without a call: a broadcast, refused.
  const all = new PushCopies(() => 3, 10);
  assert.equal(await Promise.all([all.gather(push, () => 1), all.gather(push, () => 1), all.gather(push, () => 0)]), [
    'refuse',
    'refuse',
    'refuse',
  ]);
});
c('should refuse a push that sessions of several calls got, and handle copies no call waits for', async () => {
  const copies = new PushCopies(() => 2, 10);
  assert.equal(await Promise.all([copies.gather(push, () => 1), copies.gather(push, () => 2)]), ['refuse', 'refuse']);
  assert.equal(await Promise.all([copies.gather(push, () => 0), copies.gather(push, () => 0)]), ['handle', 'handle']);
});
c('should tell different pushes apart by id, method and params', async () => {
  const copies = new PushCopies(() => 2, 10);
  const verdicts: Array<Promise<CopyVerdict>> = [
    copies.gather(push, () => 1),
    copies.gather({ ...push, id: 4 }, () => 1),
    copies.gather({ ...push, params: { message: 'other' } }, () => 1),
  ];
  assert.is(copies.size, 3);
  assert.equal(await Promise.all(verdicts), ['handle', 'handle', 'handle']);
});
c.run();
