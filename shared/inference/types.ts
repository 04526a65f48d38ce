import type { TaskConfig } from '../tasks/types.ts'
import type { ModelSignature } from '../models/onnx.ts'
import type { DataUrl } from '../http/data-url.ts'

/**
 * What handlers see of the inference sidecar (`ctx.inference`) and the detection result of
 * spec 2.6. Types and schemas only: the client lives in `runtime/inference/client.ts`.
 */

// ── spec 2.6: detection result ────────────────────────────────────────────────────────
/** spec 2.6: landmark items use `xRatio`/`yRatio` keys with pixel values; maskPolygon items are normalized. */
export interface RatioPoint { xRatio: number; yRatio: number }
export interface ConfidenceItem { label: string; confidence: number }
export interface TargetBox { x: number; y: number; width: number; height: number }

export interface Target {
  box: TargetBox
  confidence: ConfidenceItem[]
  /** Only when the pipeline has a logic node (spec 2.6). */
  bLogicResult?: boolean
  landmark: RatioPoint[]
  maskPolygon: RatioPoint[]
  /** spec 2.6: debug preview of the first feature-vector values (face analysis). */
  featurePreview?: number[]
}

export interface Area {
  areaId: string
  areaName: string
  bDetected: boolean
  targetList: Target[]
}

/** `resData` of PTaskDetectPic without `fullPicture` (the runtime adds it). */
export interface DetectionResultCore {
  algorithmCode: string
  /** Millisecond timestamp as a string (spec 2.6). */
  timestamp: string
  areaList: Area[]
}

export interface DetectionResult extends DetectionResultCore {
  /** `data:image/jpeg;base64,...` (a DataUrl, written as that text) or a URL served by the device (spec 2.6). */
  fullPicture: string | DataUrl
}

/** spec 2.6: "the default area uses a fixed default id". */
export const DEFAULT_AREA = { areaId: '0', areaName: 'default' } as const

// ── the service handlers use ─────────────────────────────────────────────────────────
/** An image for the sidecar: a file it reads itself (staged upload), encoded bytes, or a raw RGB frame. */
export type ImageSource =
  | { kind: 'path'; path: string }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'rgb'; width: number; height: number; data: Uint8Array }

export interface DetectRequest {
  /** The handle a pipeline was loaded under (the task id). */
  handle: string
  image: ImageSource
  /** Reported in IMAGE_INPUT_TOO_LARGE details (spec 7.1), e.g. `image`. */
  purpose?: string
  /**
   * Give up (retryable) when the result is not ready by then: ms on this process's monotonic
   * clock (`monotonicNow()` of shared/clock.ts), so a wall-clock step does not end it.
   */
  deadline?: number
  /** Draw and JPEG-encode the overlay (default true; camera frames may skip it). */
  overlay?: boolean
  /** The caller going away: a detection still waiting for decode memory gives up. */
  signal?: AbortSignal
}

export interface DetectOutcome {
  result: DetectionResultCore
  /** JPEG of the image with boxes, labels, landmarks and polygons drawn, when asked for. */
  overlayJpeg: Buffer | null
  /** Stage durations in ms, measured in the sidecar. */
  timings: Record<string, number>
}

export interface SidecarStats {
  pid: number
  /** One entry per open model session. */
  sessions: { model: string; refs: number }[]
  pipelines: { algorithmId: string; refs: number }[]
  handles: { handle: string; algorithmId: string }[]
  /** Decode memory admission (spec 4.11): the budget, what detections hold now, how many wait. */
  memory: { budgetBytes: number; inUseBytes: number; waiting: number }
}

export interface InferenceService {
  /**
   * Loads the algorithm's pipeline under `handle` (sessions created and warmed). Loading an
   * existing handle with the same algorithm keeps it (spec 3.2 reuse) and applies the config.
   * Errors: ActionAlgLoadFailed (unknown algorithm), TaskCreateFailed (model init failed),
   * SidecarUnavailable (retryable).
   */
  load(handle: string, algorithmId: string, taskConfig?: TaskConfig): Promise<void>
  /** Frees what no other handle uses. TaskBusy (retryable) while a detection runs on it. */
  release(handle: string): Promise<void>
  /** Whether `handle` is loaded (in this runtime's view, re-established across restarts). */
  has(handle: string): boolean
  /** How many detections run on `handle` now: while any does, `release` answers TaskBusy. */
  running(handle: string): number
  /**
   * Detection starts as in flight when `detect` is called (synchronously), so a `release`
   * after that call is refused with TaskBusy.
   */
  detect(request: DetectRequest): Promise<DetectOutcome>
  /**
   * The overlay JPEG of a detection's `result` drawn over its image (spec 2.6 `fullPicture` in
   * URL mode, rendered when first fetched). Image errors and ImageMemoryBusy as for `detect`.
   */
  renderOverlay(image: ImageSource, result: DetectionResultCore, signal?: AbortSignal): Promise<Buffer>
  stats(): Promise<SidecarStats>
  /**
   * Opens a model file as a session in the sidecar, reads its inputs and outputs, closes it
   * (spec 4.11: an uploaded model is validated by opening it in the sidecar). ModelInvalid when it
   * does not load or the sidecar dies opening it; SidecarUnavailable (retryable) while it is down.
   */
  inspectModel(file: string): Promise<ModelSignature>
}
