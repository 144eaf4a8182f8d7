/**
 * readPages, the one pager of list methods: it follows `nextCursor` in order, hands every page
 * over, stops after `MAX_PAGES`, and rejects at a page that is an error or a fetch that fails,
 * keeping the pages read before.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JsonObject } from '../../lib/core/primitives.ts';
import { MAX_PAGES, readPages, type Page } from '../../lib/util/readPages.ts';

const s = suite('readPages');

s('should follow nextCursor page by page and hand every page over in order', async () => {
  const asked: Array<[string | undefined, number]> = [];
  const seen: JsonObject[] = [];
  const pages: Record<string, Page> = {
    first: { result: { tools: [{ name: 'a' }], nextCursor: 'c1' } },
    c1: { result: { tools: [{ name: 'b' }], nextCursor: 'c2' } },
    c2: { result: { tools: [{ name: 'c' }] } },
  };
  await readPages(
    async (cursor, page) => {
      asked.push([cursor, page]);
      return pages[cursor ?? 'first']!;
    },
    (result) => void seen.push(result),
  );
  assert.equal(asked, [
    [undefined, 0],
    ['c1', 1],
    ['c2', 2],
  ]);
  assert.equal(
    seen.map((r) => (r['tools'] as Array<{ name: string }>)[0]!.name),
    ['a', 'b', 'c'],
  );
});

s('should stop after MAX_PAGES when the cursor never ends', async () => {
  let fetched = 0;
  await readPages(
    async (_cursor, page) => {
      fetched += 1;
      return { result: { nextCursor: `p${page + 1}` } };
    },
    () => {},
  );
  assert.is(fetched, MAX_PAGES);
});

s('should reject with the message of a page that is an error, keeping the pages before', async () => {
  const seen: JsonObject[] = [];
  const reading = readPages(
    async (cursor) => (cursor === undefined ? { result: { nextCursor: 'next' } } : { error: { message: 'no more for you' } }),
    (r) => void seen.push(r),
  );
  try {
    await reading;
    assert.unreachable('should have rejected');
  } catch (e) {
    assert.instance(e, Error);
    assert.is((e as Error).message, 'no more for you');
  }
  assert.is(seen.length, 1);
});

s('should reject when fetching a page fails', async () => {
  let failed = false;
  await readPages(
    async () => {
      throw new Error('gone');
    },
    () => {},
  ).catch((e: Error) => (failed = e.message === 'gone'));
  assert.ok(failed);
});

s.run();
