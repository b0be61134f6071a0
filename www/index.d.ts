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
  fix: string | null;
  saving_bytes: number | null;
  cost: string | null;
  fits_after: boolean | null;
  check: string | null;
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
  runtime: Record<string, unknown> | null;
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
    cause: string;
    fix: string | null;
    saving: string | null;
    cost: string | null;
    then: string | null;
    fits: boolean | null;
    check: string | null;
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
  ): Promise<{ report: Report; view: View; markdown: string; ms: number; phases: [string, number][]; memoryBytes: number; version: string; workers: number }>;
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
