/**
 * The one pager of list methods (`tools/list`, `prompts/list`, `resources/list`): follows
 * `nextCursor` page after page, at most `MAX_PAGES`, and hands each result over. How a page is
 * fetched (an upstream session, a modern upstream) is the caller's: this module does no I/O.
 */
import type { JsonObject } from '../core/primitives.ts';

/** Most pages of one list read. */
export const MAX_PAGES = 100;

/** One page as its fetcher got it: a list result, or the error the server answered with. */
export type Page = { readonly result: JsonObject } | { readonly error: { readonly message: string } };

/**
 * Reads every page of a list (at most {@link MAX_PAGES}): `fetchPage` gets the cursor of the page
 * (`undefined` for the first) and its index; each result goes to `onPage`, in order. Rejects when
 * a page is an error (with its message) or when `fetchPage` rejects; the pages read before stay read.
 */
export async function readPages(
  fetchPage: (cursor: string | undefined, page: number) => Promise<Page>,
  onPage: (result: JsonObject) => void,
): Promise<void> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const outcome = await fetchPage(cursor, page);
    if ('error' in outcome) throw new Error(outcome.error.message);
    onPage(outcome.result);
    cursor = typeof outcome.result['nextCursor'] === 'string' ? outcome.result['nextCursor'] : undefined;
    if (cursor === undefined) return;
  }
}
