/** The usage text of `mcp-dual-era explain`, apart so `--help` loads nothing else. */
export const EXPLAIN_USAGE = `Usage:
  mcp-dual-era explain [options] <transcript.jsonl | ->

Shows each message of a recorded exchange beside its translation into the other era: a legacy
transcript (initialize, pushes, setLevel…) as a modern client sees it through mcp-dual-era, a
modern one (_meta on every request, input_required…) as a legacy peer sees it. One JSON-RPC
message per line; a line may also be {"message": …} (with other members, such as "label").
"-" reads standard input.

Options:
  --to <era>       legacy or modern (default: the other era than the transcript's)
  --width <n>      total width of the side-by-side view (default: the terminal's, else 160)
  --json           print the explanation as JSON
  --no-color       no colour even on a terminal (also NO_COLOR=1)
  -h, --help       print this help

Exit codes: 0 done, 2 usage (a transcript that cannot be read, or a line that is not JSON).
`;
