/**
 * The standing prose of bench/RESULTS.md: how a bench is set up and why, which does not change
 * from run to run (the figures and the conditions of each run are markdown.ts's).
 */

/** Why every Node process of the wrap bench runs with `--no-memory-reducer`. */
export const MEMORY_REDUCER_NOTE = [
  '**Why `--no-memory-reducer`.** Every Node process of the wrap bench (the fronts, the servers and the load generator: `npm run bench:wrap` and ' +
    "`bench/all.ts` start it so) runs with V8's `--no-memory-reducer`. Without it, a process whose heap stays steady gets an idle-time full " +
    "garbage collection about 100 s after its last one (the memory reducer's watchdog), and that collection, unlike the others, keeps no hidden " +
    'class (map) that no live object uses: between two requests that is every request, response and socket shape, so every optimised function ' +
    'built on them, the whole request path of an HTTP front, is deoptimised and compiled again under load. A long-running server pays that at ' +
    'most once per 100 s (a few hundred milliseconds of compiler time on a background thread, well under 1%); a bench pays it in whichever cell ' +
    "runs 100 s after a contender started, so it measured the bench's schedule rather than the contenders: it had been landing in the wrap's " +
    'concurrency-1 cell (the contender with the longest request path, started first), with p99 3.5 ms instead of 1.9 ms and 40% more CPU per call. ' +
    'A deployment that wants the same steadiness can start the command the same way: ' +
    '`node --no-memory-reducer node_modules/mcp-dual-era/dist/cli/main.js serve …`.',
].join('');

/** What the wrap does per call to get to its figures. */
export const WRAP_PATH_NOTE =
  "**What got the wrap there.** POSTed JSON answered on Node's own request and response objects (no Web `Request`/`Response` per call), plain " +
  'cancellation objects instead of `AbortController`s, the envelope read once, direct shape checks before any schema run, no per-call closures ' +
  'for calls that never push, messages to a stdio server batched per turn of the event loop, and at concurrency 1, where every microsecond of ' +
  "the front is on the caller's path, as little work and allocation per call as the checks allow: a request whose upstream session is at hand " +
  "goes out with no async frame of its own, one shared timer for every call's deadline, capability sets compared with the recent ones instead " +
  "of serialised, a tool's `x-mcp-header` annotations read once, and JSON nesting bounded by counting brackets natively. `npm run bench:front` " +
  'measures that part alone: CPU time and bytes allocated per call through the front in one process, against a front that only parses and ' +
  're-serialises the same messages.';

/** Where a stdio host's wait for the first answer goes. */
export const FIRST_ANSWER_NOTE =
  'The server is started before anything else of ours loads (`lib/cli/early.ts`) and the transport that first asks for it takes it over, so ' +
  "what is added to the server's own start is Node's start of our process (about 100 ms on this machine, before any code of ours runs) and two " +
  'round trips on the pipe; where these servers alone take 350–400 ms, that is what stands between the goal and the figures. Run from the ' +
  'TypeScript loader (`npm start -- connect …`, the specs) the command needs about 400 ms more to load.';

/** How the fleet bench counts the Redis commands of a call on a Redis other programs may use too. */
export const FLEET_COUNT_NOTE =
  'Counted exactly, on a Redis that other programs may be using at the same time (so not from `INFO commandstats`, whose counters are the whole ' +
  "server's): the bench watches the Redis with `MONITOR` and counts only the commands that come from the two replicas' own connections (found from " +
  'their sockets in `/proc`), between `ECHO` markers it sends itself at each change of phase. The heartbeat (each replica writes its directory record ' +
  "every second, and reads the fleet's agreed keys again every 10 s) is counted apart, so no subtraction of an idle period is needed; the idle row " +
  'shows that nothing but the heartbeat runs in the background.';
