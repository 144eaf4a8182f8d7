/**
 * Loads the transcript corpus (`fixtures/transcripts/<scenario>/`): the scenario file and the
 * labelled legacy and modern lines. Reports structural problems instead of throwing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Revision } from './schemas.ts';

export const TRANSCRIPTS = resolve(import.meta.dirname, '../../fixtures/transcripts');

export interface Step {
  readonly label: string;
  readonly kind: string;
  readonly back?: string;
  readonly backModern?: string;
  readonly [key: string]: unknown;
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly legacyVersion: Revision;
  readonly context: Record<string, any>;
  readonly steps: readonly Step[];
  readonly legacy: ReadonlyMap<string, unknown[]>;
  readonly modern: ReadonlyMap<string, unknown[]>;
}

function readLines(file: string): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let entry: { label?: unknown; message?: unknown };
      try {
        entry = JSON.parse(line);
      } catch (e) {
        throw new Error(`${file}:${i + 1}: not JSON (${(e as Error).message})`);
      }
      if (typeof entry.label !== 'string' || !('message' in entry)) throw new Error(`${file}:${i + 1}: a line needs "label" and "message"`);
      const list = out.get(entry.label) ?? [];
      list.push(entry.message);
      out.set(entry.label, list);
    });
  return out;
}

/** The scenario folders, sorted. */
export function scenarioNames(): string[] {
  return readdirSync(TRANSCRIPTS)
    .filter((n) => statSync(join(TRANSCRIPTS, n)).isDirectory())
    .sort();
}

/** The files a scenario folder is missing (an unpaired folder). */
export function missingFiles(name: string): string[] {
  return ['scenario.json', 'legacy.jsonl', 'modern.jsonl'].filter((f) => !existsSync(join(TRANSCRIPTS, name, f)));
}

export function loadScenario(name: string): Scenario {
  const dir = join(TRANSCRIPTS, name);
  const meta = JSON.parse(readFileSync(join(dir, 'scenario.json'), 'utf8'));
  return {
    name,
    description: meta.description,
    legacyVersion: meta.legacyVersion ?? '2025-11-25',
    context: meta.context ?? {},
    steps: meta.steps ?? [],
    legacy: readLines(join(dir, 'legacy.jsonl')),
    modern: readLines(join(dir, 'modern.jsonl')),
  };
}
