/**
 * What README.md documents, read from the README itself so that the specs checking it cannot
 * drift from it: the names it shows imported from each entry point (import lines and prose such
 * as "`inspectServer(target)` from `mcp-dual-era/client`"), its TypeScript snippets, and its
 * relative links. Not a Markdown parser: only the README's own forms are recognised.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './everything.ts';

/** The README's text. */
export const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

const SPECIFIER = String.raw`mcp-dual-era(?:\/[a-z]+)?`;
const NAME = String.raw`[A-Za-z_$][\w$]*`;

function add(into: Map<string, Set<string>>, specifier: string, names: Iterable<string>): void {
  const set = into.get(specifier) ?? new Set<string>();
  for (const name of names) set.add(name);
  into.set(specifier, set);
}

/**
 * Every name the README documents from each entry point of this package (`mcp-dual-era`,
 * `mcp-dual-era/server`, …): from its import lines (in any code block, diffs included) and from
 * the prose forms "**`a`** and **`b`** (`mcp-dual-era/x`)" and "`a(…)` from `mcp-dual-era/x`".
 * `types` holds the names imported with `type`.
 */
export function documentedNames(text = README): { values: Map<string, Set<string>>; types: Map<string, Set<string>> } {
  const values = new Map<string, Set<string>>();
  const types = new Map<string, Set<string>>();
  for (const m of text.matchAll(new RegExp(String.raw`import\s+(type\s+)?\{([^}]*)\}\s+from\s+'(${SPECIFIER})'`, 'g'))) {
    for (const raw of m[2]!.split(',')) {
      const item = raw.trim();
      if (!item) continue;
      const isType = m[1] !== undefined || item.startsWith('type ');
      const name = item.replace(/^type\s+/, '').split(/\s+as\s+/)[0]!.trim();
      add(isType ? types : values, m[3]!, [name]);
    }
  }
  const prose = text.replace(/\s+/g, ' ');
  for (const m of prose.matchAll(new RegExp(String.raw`((?:\*\*\`${NAME}\`\*\*(?: and )?)+) \(\`(${SPECIFIER})\``, 'g'))) {
    add(values, m[2]!, [...m[1]!.matchAll(new RegExp(String.raw`\`(${NAME})\``, 'g'))].map((n) => n[1]!));
  }
  for (const m of prose.matchAll(new RegExp(String.raw`\`(${NAME})(?:\([^\`]*\))?\` from \`(${SPECIFIER})\``, 'g'))) add(values, m[2]!, [m[1]!]);
  return { values, types };
}

/** One fenced code block of the README. */
export interface CodeBlock {
  readonly lang: string;
  readonly code: string;
  /** The 1-based line of the README on which the code starts. */
  readonly line: number;
}

/** Every fenced code block of the README, with its language tag. */
export function codeBlocks(text = README): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    blocks.push({ lang: open[1]!, code: lines.slice(start, end).join('\n'), line: start + 1 });
    i = end;
  }
  return blocks;
}

/** The README's TypeScript snippets that use this package: its ```ts blocks that import from it. */
export function packageSnippets(text = README): CodeBlock[] {
  return codeBlocks(text).filter((b) => b.lang === 'ts' && new RegExp(String.raw`from '${SPECIFIER}'`).test(b.code));
}

/**
 * The targets of the README's relative links and images (`[x](path)`, `![x](path)`), without
 * their `#fragment`; links to a heading of the README itself, and absolute URLs, are left out.
 */
export function relativeLinks(text = README): string[] {
  const targets = new Set<string>();
  for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('//')) continue;
    targets.add(target.replace(/#.*$/, ''));
  }
  for (const m of text.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g)) {
    const target = m[1]!;
    if (!/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#')) targets.add(target.replace(/#.*$/, ''));
  }
  return [...targets].sort();
}
