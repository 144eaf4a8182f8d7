/**
 * What the documentation documents (README.md, the front page, and the guides in docs/ it links
 * to), read from the files themselves so that the specs checking them cannot drift from them: the
 * names shown imported from each entry point (import lines and prose such as
 * "`inspectServer(target)` from `mcp-dual-era/client`"), the TypeScript snippets, and the relative
 * links. Not a Markdown parser: only the documentation's own forms are recognised.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT } from './everything.ts';

/** The README's text. */
export const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** One file of the documentation: its path from the root of the repository and its text. */
export interface DocFile {
  readonly file: string;
  readonly text: string;
}

/** The README and every guide in docs/ (the generated matrix page among them). */
export const DOCS: readonly DocFile[] = [
  { file: 'README.md', text: README },
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => ({ file: `docs/${f}`, text: readFileSync(join(ROOT, 'docs', f), 'utf8') })),
];

/** The text of the guide `file` (`docs/design.md`, …). */
export function docText(file: string): string {
  const doc = DOCS.find((d) => d.file === file);
  if (!doc) throw new Error(`no ${file} among the documentation`);
  return doc.text;
}

const SPECIFIER = String.raw`mcp-dual-era(?:\/[a-z]+)*`;
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
export function documentedNames(text = DOCS.map((d) => d.text).join('\n')): {
  values: Map<string, Set<string>>;
  types: Map<string, Set<string>>;
} {
  const values = new Map<string, Set<string>>();
  const types = new Map<string, Set<string>>();
  for (const m of text.matchAll(new RegExp(String.raw`import\s+(type\s+)?\{([^}]*)\}\s+from\s+'(${SPECIFIER})'`, 'g'))) {
    for (const raw of m[2]!.split(',')) {
      const item = raw.trim();
      if (!item) continue;
      const isType = m[1] !== undefined || item.startsWith('type ');
      const name = item
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]!
        .trim();
      add(isType ? types : values, m[3]!, [name]);
    }
  }
  const prose = text.replace(/\s+/g, ' ');
  for (const m of prose.matchAll(new RegExp(String.raw`((?:\*\*\`${NAME}\`\*\*(?: and )?)+) \(\`(${SPECIFIER})\``, 'g'))) {
    add(
      values,
      m[2]!,
      [...m[1]!.matchAll(new RegExp(String.raw`\`(${NAME})\``, 'g'))].map((n) => n[1]!),
    );
  }
  for (const m of prose.matchAll(new RegExp(String.raw`\`(${NAME})(?:\([^\`]*\))?\` from \`(${SPECIFIER})\``, 'g')))
    add(values, m[2]!, [m[1]!]);
  return { values, types };
}

/** One fenced code block of the documentation. */
export interface CodeBlock {
  readonly lang: string;
  readonly code: string;
  /** The 1-based line of its file on which the code starts. */
  readonly line: number;
  /** Its file (`README.md`, `docs/serving.md`, …). */
  readonly file: string;
}

/** Every fenced code block of the README, with its language tag. */
export function codeBlocks(text = README, file = 'README.md'): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    blocks.push({ lang: open[1]!, code: lines.slice(start, end).join('\n'), line: start + 1, file });
    i = end;
  }
  return blocks;
}

/** The documentation's TypeScript snippets that use this package: its ```ts blocks that import from it. */
export function packageSnippets(docs: readonly DocFile[] = DOCS): CodeBlock[] {
  return docs
    .flatMap((d) => codeBlocks(d.text, d.file))
    .filter((b) => b.lang === 'ts' && new RegExp(String.raw`from '${SPECIFIER}'`).test(b.code));
}

/**
 * The targets of the documentation's relative links and images (`[x](path)`, `![x](path)`, `<img
 * src>`), each from the root of the repository and without its `#fragment`; links to a heading of
 * the same file, and absolute URLs, are left out.
 */
export function relativeLinks(docs: readonly DocFile[] = DOCS): string[] {
  const targets = new Set<string>();
  const add = (file: string, target: string): void => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('//')) return;
    targets.add(normalize(join(dirname(file), target.replace(/#.*$/, ''))));
  };
  for (const { file, text } of docs) {
    for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) add(file, m[1]!);
    for (const m of text.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g)) add(file, m[1]!);
  }
  return [...targets].sort();
}
