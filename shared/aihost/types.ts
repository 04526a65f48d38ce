/**
 * What handlers see of the device itself (`ctx.device`): facts that only the runtime knows
 * (sidecar state, inference inventory, log files, restart), behind small interfaces so that
 * later areas plug in without touching the AI-host handlers.
 */

/** The inference sidecar as the runtime's supervisor sees it. */
export interface SidecarState {
  state: 'starting' | 'running' | 'restarting' | 'stopped'
  pid: number | null
  restarts: number
}

/** What the inference service reports for Info / QueryDeviceStatus / GraphicsMemory. */
export interface InferenceReport {
  sidecar: SidecarState
  /** onnxruntime execution providers actually used by the sessions, e.g. ['cpu']. */
  executionProviders: string[]
  /** Pipelines (algorithms) the device offers. */
  pipelines: { algorithmId: string; algorithmName: string; version: string; models: string[] }[]
  /** Model sessions currently open in the sidecar. */
  loadedModels: { model: string; refs: number }[]
  /** Tasks (handles) currently loaded. */
  tasks: number
}

/** Filled in by the inference service once it exists (`device.setInferenceReporter`). */
export type InferenceReporter = () => Promise<InferenceReport>

export interface LogQuery {
  /** Lowest level to return (pino names). */
  level?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'
  /** Inclusive bounds, ms since epoch. */
  from?: number
  to?: number
  requestId?: string
  /** Case-insensitive substring of the message or any string field. */
  text?: string
  pageNo: number
  pageSize: number
}

/** A pino log line: numeric level, time (ms), msg, and the fields of its area. */
export interface LogLine {
  level: number
  time: number
  msg?: string
  [field: string]: unknown
}

export interface LogPage {
  total: number
  pageNo: number
  pageSize: number
  /** Newest first. */
  rows: LogLine[]
  /** Files read and their total size (the rotation bound). */
  files: number
  bytesScanned: number
}

/** The device's log file: whether it takes lines, and what a full disk cost (lines dropped). */
export interface LogFileHealth {
  writable: boolean
  writeErrors: number
  droppedLines: number
  /** e.g. `ENOSPC`. */
  lastError: string | null
  lastErrorAt: number | null
}

/** A pipeline as its manifest describes it (models/manifest-schema.ts): nodes and result mapping. */
export interface PipelineDescription {
  algorithmId: string
  algorithmName: string
  version: string
  nodes: ({ id: string; action: string; from?: string; model?: string; scoreThreshold?: number } & Record<string, unknown>)[]
  result: { targets: string } & Record<string, unknown>
}

export interface DeviceHost {
  /** The inference report, or null while no inference service is registered. */
  inference(): Promise<InferenceReport | null>
  setInferenceReporter(reporter: InferenceReporter): void
  /** The pipeline of an algorithm, or null when unknown. */
  pipeline(algorithmId: string): PipelineDescription | null
  setPipelineSource(source: (algorithmId: string) => PipelineDescription | null): void
  /** The log file's health, or null where the device logs to no file (tests). */
  logFile(): LogFileHealth | null
  /** Structured logs of this device (rotating files under DATA_DIR/logs). */
  queryLogs(query: LogQuery): Promise<LogPage>
  /** Whether a supervisor (runtime/start.mjs) restarts the process when it asks to. */
  readonly supervised: boolean
  /**
   * Stops the device gracefully after the current response and exits with the restart code,
   * which the supervisor answers by installing a staged upgrade and starting again.
   */
  requestRestart(reason: string): void
}

/** Exit code by which the runtime asks its supervisor to restart it (EX_TEMPFAIL). */
export const RESTART_EXIT_CODE = 75
