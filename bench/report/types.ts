/**
 * The shape of a combined run (bench/results/latest.json, written by bench/all.ts): the machine,
 * the peers, the commit, and each bench's own report as it wrote it. Only what the report reads is
 * typed (with the benches' own types where they have them); a part a run left out (a filtered run,
 * a bench that failed) is absent.
 */
import type { FirstTarget } from '../first.ts';
import type { FleetResults } from '../fleet/summary.ts';
import type { LatencyCell, Stats } from '../mrtr/latency.ts';
import type { Row, TargetResult } from '../probe/runSuite.ts';
import type { TasksResults } from '../tasks/summary.ts';
import type { Cell, Comparison } from '../wrap/cells.ts';

export interface Run {
  readonly schema: 1;
  readonly generatedAt: string;
  /** The arguments `npm run bench` was given; a run with none is a full run. */
  readonly args: readonly string[];
  readonly quick: boolean;
  readonly commit: { readonly hash: string | null; readonly dirty: boolean };
  readonly machine: Machine;
  readonly load: { readonly start: readonly number[]; readonly end: readonly number[] };
  readonly peers: readonly Peer[];
  /** Exit status of each bench (non-zero: a wrong answer or a failure, never a timing). */
  readonly exitCodes: Readonly<Record<string, number>>;
  readonly elapsedSeconds: number;
  readonly parts: {
    readonly translate?: TranslatePart;
    readonly wrap?: WrapPart;
    readonly mrtr?: MrtrPart;
    readonly probe?: ProbePart;
    readonly first?: FirstPart;
    readonly fleet?: FleetPart;
    readonly callers?: CallersPart;
    readonly front?: FrontPart;
    readonly tasks?: TasksPart;
  };
}

/** The front bench (bench/front.ts): CPU time and bytes per call through the HTTP front in one process, and what tracing adds. */
export interface FrontPart {
  readonly calls: number;
  readonly rounds: number;
  readonly minimal: { readonly usPerCall: number; readonly bytesPerCall: number };
  readonly wrapped: { readonly usPerCall: number; readonly bytesPerCall: number };
  /** The wrap with metrics on and no SDK registered, measured in turn with `traced.plain`. */
  readonly metrics?: { readonly usPerCall: number; readonly bytesPerCall: number };
  /** What metrics add a call: the median of the differences of `metrics`' rounds with `traced.plain`'s beside them (absent in runs from before it was). */
  readonly metricsUsPerCall?: number;
  readonly traced?: {
    /** The wrap untraced, measured in turn with the stand-in (the baseline of our own part). */
    readonly plain?: { readonly usPerCall: number; readonly bytesPerCall: number };
    readonly standIn: { readonly usPerCall: number; readonly bytesPerCall: number };
    readonly sdk: { readonly usPerCall: number; readonly bytesPerCall: number };
    readonly spansPerCall: number;
    readonly ownUsPerCall: number;
    readonly sdkUsPerCall: number;
    readonly propagatorUsPerCall: number;
    readonly goalOwnUs: number;
  };
  /**
   * A tenth of the requests sampled (a parent-based sampler), metrics on, in turn with both off:
   * with stand-ins that cost nothing, the propagator's too (our own part, metrics included), and
   * with the OpenTelemetry SDK and its W3C propagator (absent in runs from before it was).
   */
  readonly sampled?: {
    readonly bothOff: { readonly usPerCall: number; readonly bytesPerCall: number };
    readonly standIn: { readonly usPerCall: number; readonly bytesPerCall: number };
    readonly sdk: { readonly usPerCall: number; readonly bytesPerCall: number };
    readonly ownUsPerCall: number;
    readonly sdkUsPerCall: number;
  };
}

/** The callers bench (bench/callers.ts): waves of distinct callers, one call each, through each front. */
export interface CallersPart {
  readonly callers: readonly number[];
  readonly concurrency: number;
  readonly waves: ReadonlyArray<{
    readonly front: string;
    readonly label: string;
    readonly callers: number;
    readonly answered: number;
    readonly wallMs: number;
    readonly perSecond: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly servers: number;
    readonly memoryMb: number;
    readonly failures: Readonly<Record<string, number>>;
  }>;
}

export interface Machine {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly os: string;
  readonly kernel: string;
  readonly arch: string;
  readonly node: string;
}

export interface Peer {
  readonly name: string;
  readonly version: string | null;
  readonly role: string;
}

export interface TranslateRow {
  readonly case: string;
  readonly direction: string;
  readonly size: 'small' | 'medium' | 'large';
  readonly bytes: number;
  readonly baselineNsPerMsg?: number;
  readonly translateNsPerMsg?: number;
  readonly ratio?: number;
  readonly pairedRatio?: number;
  readonly failure?: string;
}

export interface TranslatePart {
  readonly options: { readonly sampleMs: number; readonly samples: number; readonly quick: boolean };
  readonly goal: { readonly maxRatio: number; readonly sizes: readonly string[] };
  readonly results: readonly TranslateRow[];
}

export type WrapCell = Cell;
export type WrapComparison = Comparison;

export interface WrapPart {
  readonly wrap: { readonly commit: string | null; readonly source: string };
  readonly options: {
    readonly quick: boolean;
    readonly slices: number;
    readonly sliceMs: number;
    readonly warmupMs: number;
    readonly startWarmupMs: number;
    readonly leadInMs?: number;
    readonly nodeFlags?: readonly string[];
  };
  readonly goals: {
    readonly definition: {
      readonly minVsPassthrough: number;
      readonly minVsMcpProxy: number;
      readonly maxAddedP50Us: number;
      readonly addedP50Concurrency: number;
      readonly minStdioVsRelay?: number;
      readonly minObservedVsPlain?: number;
      readonly minStdioVsTranslatingRelay?: number;
      readonly minSampledVsPlain?: number;
    };
  };
  readonly comparisons: {
    readonly vsPassthrough: readonly WrapComparison[];
    readonly vsProxy: readonly WrapComparison[];
    readonly vsDirectSdk: readonly WrapComparison[];
    readonly stdioVsSdk: readonly WrapComparison[];
    readonly stdioVsRaw: readonly WrapComparison[];
    /** Absent in results from before the stdio relay was measured. */
    readonly stdioVsRelay?: readonly WrapComparison[];
    /** The wrap over stdio ÷ the relay that decodes and encodes every line (absent in results from before it was measured). */
    readonly stdioVsParsingRelay?: readonly WrapComparison[];
    /** That parsing relay ÷ the byte relay: what reading the messages costs any stdio front. */
    readonly parsingRelayVsRelay?: readonly WrapComparison[];
    /** The wrap over stdio ÷ the relay that translates modern requests and legacy answers and nothing else (absent in results from before it was measured). */
    readonly stdioVsTranslatingRelay?: readonly WrapComparison[];
    /** That translating relay ÷ the byte relay: what translating costs any stdio front. */
    readonly translatingRelayVsRelay?: readonly WrapComparison[];
    /** The wrap over stdio with a legacy client (its session relayed) ÷ the byte relay, both sent the same legacy lines (absent in results from before it was measured). */
    readonly stdioLegacyVsRelay?: readonly WrapComparison[];
    /** The wrap over HTTP with spans recorded and metrics on ÷ both off (absent in results from before they existed). */
    readonly observedVsPlain?: readonly WrapComparison[];
    readonly sampledVsPlain?: readonly WrapComparison[];
    /** The wrap over HTTP with metrics on alone ÷ both off (absent in results from before it was measured). */
    readonly metricsVsPlain?: readonly WrapComparison[];
  };
  readonly cells: readonly WrapCell[];
  readonly failures: readonly string[];
}

export type MrtrLatencyCell = LatencyCell;

export interface PerParkedCall {
  readonly total: number;
  readonly rss: number;
  readonly idle: number;
  readonly wrapAlone?: number;
  readonly session?: number;
  readonly call?: number;
  readonly beyond?: number;
  readonly beyondWithSession?: number;
}

export interface MrtrPart {
  readonly quick: boolean;
  readonly n: number;
  readonly goalBeyondMessagesBytes: number;
  readonly perParkedCall: Readonly<Record<string, PerParkedCall>>;
  readonly memory: {
    readonly server?: {
      readonly pushJsonBytes: number;
      readonly paramsJsonBytes: number;
      readonly paramsHeapPerCopy: number;
      readonly serverPerSuspended: number;
      readonly serverPerFinished: number;
    };
  };
  readonly latency?: { readonly cells: readonly MrtrLatencyCell[]; readonly serverAlone: { readonly echo: Stats; readonly round: Stats } };
  readonly failures: readonly string[];
}

export type ProbeRow = Row;

export interface ProbePart {
  readonly options: { readonly quick: boolean };
  readonly targets: readonly TargetResult[];
  readonly failures: readonly string[];
}

export interface FirstPart {
  readonly options: { readonly quick: boolean; readonly rounds: number };
  readonly goal: { readonly p50Ms: number; readonly aiSdkDiscoveryMs: number };
  readonly targets: readonly FirstTarget[];
  readonly failures: readonly string[];
}

/** The fleet bench's report as it wrote it (bench/fleet/summary.ts). */
export type FleetPart = FleetResults;

/** The tasks bench's report as it wrote it (bench/tasks/summary.ts). */
export type TasksPart = TasksResults;
