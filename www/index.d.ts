// Types for the oomlens npm package (index.js). The report model is documented in
// src/report/model.rs; its JSON form is the same object `oomlens FILE --format json` prints.

export type Label = 'measured' | 'read' | 'estimated';

export interface AnalyzeOptions {
  /** Report on this module: a label like `jit_step(12)` or a name like `jit_step`. */
  module?: string;
  /** The out-of-memory error text the user got (the whole log is fine), matched to the
   * plan; with the engine's `analyzeFiles`, it may be given alone. */
  error_text?: string;
  /** The host name to record (default: the file name without `.xplane.pb`). */
  host?: string;
  /** The file name to record (default: the File's name). */
  file_name?: string;
  /** Host planes at least this large are scanned by two workers (default 32 MiB). */
  parallel_from_bytes?: number;
  /** false: the engine's worker reads the file itself; true: a reader worker reads it ahead of the scan where the browser has JSPI (the default from 64 MiB on). */
  read_ahead?: boolean;
}

export interface Progress {
  /** `open`, `index`, `plan`, `host plane`, `waiting for the second worker`,
   * `device planes`, `runtime summary`, `diagnosis` or `done`. */
  phase: string;
  /** How far the current pass is through the file, in bytes. */
  done: number;
  /** The file's size in bytes. */
  total: number;
  /** Bytes read so far over all passes. */
  read: number;
}

export interface Headline {
  verdict: 'does_not_fit' | 'leak' | 'ran_out' | 'fits' | 'plan_only' | 'runtime_only' | 'empty' | string;
  text: string;
  figures: { name: string; bytes: number; shown: string; label: Label }[];
}

export interface Diagnosis {
  id: string;
  /** The title every renderer gives the line (`The step does not fit`). */
  title: string;
  label: Label;
  text: string;
  cause: string;
  /** The first of `fixes`, with its saving, cost and fit (kept for readers of one fix). */
  fix: string | null;
  saving_bytes: number | null;
  cost: string | null;
  fits_after: boolean | null;
  /** Every fix, ranked (those with a saving first, largest first), each with its own figures. */
  fixes: { text: string; saving_bytes: number | null; cost: string | null; fits_after: boolean | null }[];
  check: string | null;
}

/**
 * The buffers live during the selected module's last execution, per device pool (in
 * natural order), as the runtime tab draws them: each buffer from its allocation to
 * its free; `other_in_use` (ns, bytes, of which the runtime's reservation) is what no
 * band holds, so that bands live at a time plus it are the bytes in use then.
 */
export interface ExecutionBands {
  execution: string;
  start_ns: number;
  end_ns: number;
  devices: {
    allocator: string;
    bands: { start_ns: number; end_ns: number | null; bytes: number; base_bytes: number; kind: 'before' | 'temporary' | 'kept'; source: string; shape?: string; dtype?: string; op?: string; region?: string }[];
    smaller_count: number;
    other_in_use: [number, number, number][];
  }[];
}

/** The report model of one host (schema `oomlens/1`); see src/report/model.rs. */
export interface Report {
  schema: string;
  tool: string;
  host: string;
  file: string;
  file_bytes: number;
  headline: Headline;
  modules: { name: string; program_id: string; label: string; executions: number; plan: Record<string, unknown> }[];
  selected_module: string | null;
  selection_reason: string;
  /** The runtime section (measured); see src/report/model/runtime.rs. */
  runtime: (Record<string, unknown> & { execution_bands?: ExecutionBands }) | null;
  capacity_bytes: number | null;
  diagnosis: Diagnosis[];
  error: Record<string, unknown> | null;
  notes: { id: string; text: string }[];
  planes: { name: string; bytes: number; lines: number }[];
  /** Device memory profiles given (measured); absent when none. */
  profiles?: { file: string; device: string | null; total_bytes: number; groups: { frame: string; kind: string; bytes: number; count: number }[]; [key: string]: unknown }[];
  /** With two profiles or more: bytes and arrays per Python frame, signed, first to last. */
  growth?: { frame: string; kind: string; bytes: number; count: number; [key: string]: unknown }[];
  /** What a joined report was built from (absent for a capture alone). */
  inputs?: { file: string; kind: 'capture' | 'error_text' | 'xla_dump' | 'device_profile'; bytes: number }[];
  [key: string]: unknown;
}

/** A text row: its name, the figure as shown, and what it means (may be empty). */
export interface ViewRow {
  name: string;
  value: string;
  note: string;
}

/** A table as the CLI lays it out: cells as shown (`full` when shortened), rows cut to the list's size. */
export interface ViewTable {
  title: string;
  label: Label;
  columns: { name: string; numeric: boolean }[];
  rows: { text: string; full: string | null }[][];
  /** `… 62 more buffers, 42.9 MiB`, when rows were left out. */
  more: string | null;
  /** One per row when some rows stand out. */
  marks: ('selected' | 'no_kernel' | null)[];
}

/**
 * The report of one host laid out for reading (src/report/view.rs): every section,
 * row, title, word and figure the CLI shows, formatted as it prints them. Strings from
 * the capture are carried as they are: escape them for your medium.
 */
export interface View {
  file: string;
  host: string;
  size: string;
  headline: { verdict: string; text: string; figures: { name: string; shown: string; label: Label }[]; labels: string };
  module: { label: string | null; reason: string; executions: number | null };
  plan: {
    rows: ViewRow[];
    roles: { role: string; words: string; short: string; bytes: number; shown: string; percent: string }[];
    roles_sentence: string;
    padding: string;
    host_memory: string | null;
    scan_stacks: string[];
    host_callbacks: string[];
    note: string | null;
  } | null;
  live: ViewTable | null;
  modules: ViewTable | null;
  runtime: {
    allocators: string[];
    device_memory: string | null;
    counts: string;
    in_use_at_starts: string | null;
    growth: string | null;
    retry: string | null;
    waits: string[];
    live_groups: { bytes: number; shown: string; count: number; origin: string; inputs: string | null }[];
    live_groups_more: string | null;
    host_events: { count: number; total: string; name: string }[];
    executions: ViewTable | null;
  } | null;
  error: { title: string; rows: ViewRow[]; reading: string } | null;
  notes: { id: string; text: string }[];
  diagnosis: {
    id: string;
    title: string;
    label: Label;
    text: string;
    /** Null when the title or the text already says it. */
    cause: string | null;
    fixes: { text: string; saving: string | null; cost: string | null; then: string | null; fits: boolean | null }[];
    check: string | null;
    items: string[];
  }[];
  nothing_stands_out: string | null;
  check: string | null;
  labels: { label: Label; meaning: string }[];
  live_buffers: { name: string; shape: string; role: string; bytes: number; rows: ViewRow[] }[];
}

export class AbortError extends Error {}
export class AnalysisError extends Error {
  /** `not_a_capture`, `corrupt`, `empty`, `unknown_module`, `read`, `engine`, … */
  kind: string;
}

/**
 * Analyzes one capture (`*.xplane.pb`) in a fresh web worker and resolves to its report.
 * A File or Blob is read in slices, never whole.
 */
export function analyze(
  fileOrBytes: Blob | ArrayBuffer | ArrayBufferView,
  options?: AnalyzeOptions & { onProgress?: (p: Progress) => void; signal?: AbortSignal; workerUrl?: string | URL },
): Promise<Report>;

/** One worker for several analyses; a new analysis cancels the running one. */
export class Analyzer {
  constructor(config?: { workerUrl?: string | URL });
  run(
    input: Blob | ArrayBuffer | ArrayBufferView,
    options?: AnalyzeOptions,
    hooks?: { onProgress?: (p: Progress) => void; signal?: AbortSignal },
  ): Promise<{ report: Report; view: View; markdown: string; ms: number; phases: [string, number][]; memoryBytes: number; version: string; workers: number; readAhead: { slices: number; bytes: number; largest: number; runs: number } | null }>;
  /** One run of a comparison (what `Comparer` uses): its report as the engine's JSON text. */
  analyzeRun(
    input: Blob | ArrayBuffer | ArrayBufferView | JoinedRun,
    run: 'before' | 'after',
    options?: { module?: string; file_name?: string; host?: string },
    hooks?: { onProgress?: (p: Progress) => void; signal?: AbortSignal },
  ): Promise<{ report: string; ms: number; version: string }>;
  /** Compares two reports from `analyzeRun`; `again`: analyze those runs again about the modules named, then call with `module_choice`. */
  compareReports(
    before: string,
    after: string,
    options?: { module?: string; top?: number; module_choice?: string; before_run?: string; after_run?: string },
  ): Promise<{ diff: Diff; view: DiffView; markdown: string; version: string } | { again: { before: string | null; after: string | null; module_choice: string } }>;
  cancel(): void;
  terminate(): void;
}

export interface CompareOptions {
  /** Compare this module: a name (`jit_step`) or a label (`jit_step(12)`: the other run's
   * module of that name is taken, as program ids change between runs). */
  module?: string;
  /** How many changed buffers the view and the Markdown list (default 20). */
  top?: number;
  /** Analyze both runs at once in two workers (default: where the machine has 4 or more cores). */
  parallel?: boolean;
  /** File names for the two runs (default: the Files' names, else `before.xplane.pb` / `after.xplane.pb`). */
  before_file_name?: string;
  after_file_name?: string;
  /** Each run's folder name, when known: it names the runs when their files share a name. */
  before_run?: string;
  after_run?: string;
}

/** A run made of inputs other than a capture alone, joined as `analyzeInputs` joins them (a pasted error alone: `files: []`). */
export interface JoinedRun {
  files: { name: string; blob: Blob }[];
  error_text?: string;
}

/** Progress of one run of a comparison; `phase` is prefixed by the run (`after: plan`). */
export interface CompareProgress extends Progress {
  run: 'before' | 'after';
}

/**
 * Two runs compared (schema `oomlens-diff/1`, `schema/oomlens-diff.schema.json`): the
 * object `oomlens diff BEFORE AFTER --format json` prints; see src/diff/model.rs.
 */
export interface Diff {
  schema: string;
  tool: string;
  before: { file: string; host: string; module: string | null; plan: Record<string, unknown> | null; verdict: string; headline: string; [key: string]: unknown };
  after: { file: string; host: string; module: string | null; plan: Record<string, unknown> | null; verdict: string; headline: string; [key: string]: unknown };
  headline: { text: string; fit: string; peak_before_bytes: number | null; peak_after_bytes: number | null; pool_bytes: number | null; [key: string]: unknown };
  delta: {
    argument_bytes: number;
    output_bytes: number;
    alias_bytes: number;
    temp_bytes: number;
    heap_peak_bytes: number;
    peak_bytes: number;
    roles_at_peak: { forward: number; backward: number; workspace: number; other: number };
    [key: string]: unknown;
  } | null;
  buffers: { op_name: string; source: string; shape: string; before_bytes: number; after_bytes: number; delta_bytes: number; change: string; [key: string]: unknown }[];
  unmatched_before_bytes: number;
  unmatched_after_bytes: number;
  diagnosis: { resolved: string[]; new: string[]; remaining: string[]; [key: string]: unknown };
  predicted_vs_actual: { id: string; estimated_saving_bytes: number; actual_saving_bytes: number; [key: string]: unknown }[];
  notes: { id: string; text: string }[];
  [key: string]: unknown;
}

/** A role's share of the heap at its peak (read). */
export interface RoleShare {
  role: 'forward' | 'backward' | 'workspace' | 'other';
  words: string;
  short: string;
  bytes: number;
  shown: string;
  percent: string;
}

/** One run's heap along program order (read), for the comparison's chart. */
export interface DiffSeries {
  side: 'before' | 'after';
  module: string;
  /** Heap in use after each point and its instruction (a capture string: untrusted). */
  points: { bytes: number; instruction: string }[];
  peak_index: number | null;
  /** `peak 54.4 MiB`. */
  peak: string;
}

/**
 * One host's comparison laid out for reading (src/report/diff_view.rs): every section,
 * row, title, word and figure `oomlens diff` shows, formatted. Capture strings are
 * carried as they are: escape them for your medium.
 */
export interface DiffHostView {
  title: string;
  host: string;
  headline: string;
  labels: string;
  before: { side: 'before'; file: string; host: string; module: string | null; verdict: string; headline: string };
  after: { side: 'after'; file: string; host: string; module: string | null; verdict: string; headline: string };
  module: string;
  module_reason: string;
  plan: ViewTable | null;
  roles: ViewTable | null;
  role_bars: {
    title: string;
    before: { side: 'before'; bytes: number; shown: string; sentence: string; roles: RoleShare[] };
    after: { side: 'after'; bytes: number; shown: string; sentence: string; roles: RoleShare[] };
  } | null;
  program_order: { title: string; before: DiffSeries; after: DiffSeries; pool_bytes: number | null; pool: string | null; sentence: string } | null;
  buffers: ViewTable | null;
  sum: string | null;
  heap_sum: string | null;
  scan_stacks: string[];
  runtime: ViewTable | null;
  in_use_at_starts: string[];
  diagnosis: { status: 'resolved' | 'new' | 'remaining'; id: string; title: string }[];
  diagnosis_not_compared: string | null;
  savings: { id: string; title: string; subject: string | null; text: string; estimated: string; actual: string }[];
  notes: { id: string; text: string }[];
}

export interface DiffView {
  hosts: DiffHostView[];
  hosts_only: string[];
}

/**
 * Compares two runs (a capture each) in fresh web workers — both analyzed at once where
 * the machine has the cores — and resolves to the comparison `oomlens diff --format json` prints.
 */
export function compare(
  before: Blob | ArrayBuffer | ArrayBufferView,
  after: Blob | ArrayBuffer | ArrayBufferView,
  options?: CompareOptions & { onProgress?: (p: CompareProgress) => void; signal?: AbortSignal; workerUrl?: string | URL },
): Promise<Diff>;

/** Two workers for several comparisons; a new comparison cancels the running one. */
export class Comparer {
  constructor(config?: { workerUrl?: string | URL });
  run(
    before: Blob | ArrayBuffer | ArrayBufferView | JoinedRun,
    after: Blob | ArrayBuffer | ArrayBufferView | JoinedRun,
    options?: CompareOptions,
    hooks?: { onProgress?: (p: CompareProgress) => void; signal?: AbortSignal },
  ): Promise<{ diff: Diff; view: DiffView; markdown: string; ms: number; workers: number; version: string }>;
  /** One host of a folder reduced to its summary row (what `HostPool` uses); a capture the engine cannot read is a failed row. */
  hostRow(
    input: Blob | ArrayBuffer | ArrayBufferView,
    options?: { host?: string; file_name?: string; module?: string; error_text?: string },
    hooks?: { onProgress?: (p: Progress) => void; signal?: AbortSignal },
  ): Promise<{ row: { row: HostSummary; profile_start_ns: string | null }; ms: number; version: string }>;
  /** The cross-host summary of `hostRow`'s rows, in host order. */
  compareHosts(rows: { row: HostSummary; profile_start_ns: string | null }[]): Promise<{ hosts_summary: HostSummary[]; view: HostsView; markdown: string; version: string }>;
  cancel(): void;
  terminate(): void;
}

/** One host of a folder in one row (`hosts_summary[]` of `oomlens FOLDER --format json`; docs/hosts.md). */
export interface HostSummary {
  host: string;
  file: string;
  file_bytes: number;
  status: 'analyzed' | 'partial' | 'failed';
  error: string | null;
  error_kind: string | null;
  verdict: string | null;
  selected_module: string | null;
  plan_peak_bytes: number | null;
  runtime_peak_bytes: number | null;
  capacity_bytes: number | null;
  growth_per_execution_bytes: number | null;
  oom_evidence: ('allocator_retry' | 'peak_at_capacity' | 'plan_exceeds_capacity' | 'growth_held' | 'pasted_error')[];
  ran_out_at_ns: number | null;
  ran_out_first: boolean;
  notes: string[];
  skew: { field: string; bytes: number | null; typical_bytes: number | null; value: string | null; typical: string | null }[];
}

/** The cross-host summary laid out as the CLI prints it (src/report/view.rs `HostsView`). */
export interface HostsView {
  title: string;
  table: ViewTable;
  first_out: string | null;
  skew: string[];
  failed: string[];
  failed_note: string | null;
  detail: string;
}

/** A host file: a `File` (its name names the host), or a blob with its file name. */
export type HostFile = File | { name: string; blob: Blob | ArrayBuffer | ArrayBufferView; host?: string };

export interface HostsOptions {
  /** Workers at once (default `poolSize()`). */
  jobs?: number;
  module?: string;
  /** The pasted error text; it applies to every host. */
  error_text?: string;
}

export interface HostsProgress {
  finished: number;
  total: number;
  /** Bytes read of all the host files, of `bytes`. */
  done: number;
  bytes: number;
  workers: number;
}

/** Workers for a folder of `hosts`: the cores (or `jobs`), at most 16, bounded by `navigator.deviceMemory`. */
export function poolSize(hosts: number, jobs?: number): number;

/**
 * Analyzes a multi-host run's host files on a pool of workers (only each host's summary
 * row is kept) and resolves to the rows compared: `hosts_summary` of `oomlens FOLDER --format json`.
 */
export function analyzeHosts(
  files: HostFile[],
  options?: HostsOptions & { onProgress?: (p: HostsProgress) => void; onHost?: (h: { index: number; row: HostSummary }) => void; signal?: AbortSignal; workerUrl?: string | URL },
): Promise<HostSummary[]>;

/** A pool of workers for a folder's hosts; a new run cancels the running one. */
export class HostPool {
  constructor(config?: { workerUrl?: string | URL });
  run(
    files: HostFile[],
    options?: HostsOptions,
    hooks?: { onProgress?: (p: HostsProgress) => void; onHost?: (h: { index: number; row: HostSummary }) => void; signal?: AbortSignal },
  ): Promise<{ hosts_summary: HostSummary[]; view: HostsView; markdown: string; ms: number; workers: number; version: string }>;
  cancel(): void;
  terminate(): void;
}

// Engine exports of the WebAssembly module (`oomlens.js`, typed in `oomlens.d.ts`), for
// the page's worker; index.js does not wrap them yet.
//
// `analyzeFiles(files: InputBytes[], options: AnalyzeOptions): AnalyzeFilesResult`
//   analyzes several inputs together (captures, logs or error messages, XLA dump files
//   `module_NNNN.…`, device memory profiles), told apart by content; `files` may be empty
//   when `options.error_text` holds pasted text. Throws an error with a `kind`
//   (`no_oom_message`, `unknown_input`, `empty_input`, …).
// `classifyInput(name: string, head: Uint8Array): InputClass`
//   what a file is from its name and first 64 KiB, before analyzing it.

/** One file handed to `analyzeFiles`. */
export interface InputBytes {
  name: string;
  bytes: Uint8Array;
}

/** What `analyzeFiles` returns: the report model, the views the page shows, Markdown. */
export interface AnalyzeFilesResult {
  /** One host's report as `oomlens --format json` prints it; several hosts under `hosts`. */
  report: Report | { schema: string; hosts: Report[]; [key: string]: unknown };
  view: unknown;
  markdown: string;
}

/** What `classifyInput` says a file is. */
export type InputClass = 'capture' | 'device_profile' | 'dump_file' | 'text' | 'empty' | 'unknown';
