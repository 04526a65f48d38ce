import { defaultManifestDir, loadManifests, type LoadedManifest } from '../../models/load-manifests.ts'
import { descriptorModelOf } from '../../models/descriptor-model.ts'
import { settings } from '../../shared/config.ts'
import type { DetectionResultCore, DetectOutcome, SidecarStats } from '../../shared/inference/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import type { DescribedRegion, Recognize } from '../../shared/galleries/types.ts'
import sharp from 'sharp'
import { EngineError } from './engine-error.ts'
import type { ImageLimits } from './image/decode.ts'
import { ImageError } from './image/image-error.ts'
import { automaticBudgetBytes, MemoryBudget } from './image/memory-budget.ts'
import { ImageIntake, type EngineImage, type ShrunkImage } from './image-intake.ts'
import { DeadlineExceeded } from './pipeline/deadline.ts'
import { renderOverlay } from './pipeline/overlay.ts'
import type { JpegSettings } from '../../shared/system/types.ts'
import { buildResult } from './pipeline/result.ts'
import type { RgbImage } from './pipeline/rgb-image.ts'
import { initializeFailed, PipelineRefs } from './pipeline-refs.ts'
import { SessionPool } from './session-pool.ts'
import { checkTaskConfig } from './task-config-checks.ts'

export interface EngineOptions {
  projectRoot: string
  /**
   * The shipped manifests to start with (default `models/manifests`); `false` starts empty
   * and waits for `define` (the sidecar: the runtime's algorithm registry defines them all).
   */
  manifestDir?: string | false
  /** DATA_DIR: operator-uploaded models are read from its `models/` folder. */
  dataPath?: string
  intraOpThreads: number
  limits: ImageLimits
  /** Admission of decodes (spec 4.11); default: the automatic budget and the default queue of shared/config.ts. */
  memory?: MemoryBudget
  /**
   * IMAGE_SHRINK_ON_LOAD (default true): a JPEG is decoded at the detector's input size for
   * the detector, its full pixels only where a crop or the overlay needs them
   * (docs/detection.md "Decoding at the model's size").
   */
  shrinkOnLoad?: boolean
}

export interface EngineDetectRequest {
  handle: string
  image: EngineImage
  purpose?: string
  /** ms on the sidecar's monotonic clock (the client sends what is left, shared/clock.ts). */
  deadline?: number
  /** Default true. The overlay is drawn into the decoded pixels: a raw frame's own (`kind: 'rgb'`) included. */
  overlay?: boolean
  /** JPEG quality and size cap of the overlay (the operator's image quality); default quality 80, full size. */
  jpeg?: JpegSettings
  /** Aborted when the runtime gives up on the request: it then stops waiting for memory. */
  signal?: AbortSignal
}

interface Handle { algorithmId: string; config: TaskConfig }

/**
 * Everything the sidecar does, without the socket: handles (tasks) on pipelines by algorithm
 * (`pipeline-refs.ts`: shared by the handles that use them, released with the last one),
 * model sessions by file (shared by pipelines), and detection = image intake
 * (`image-intake.ts`) → pipeline → result → overlay. The benchmark's
 * in-process baseline uses this class directly.
 */
export class InferenceEngine {
  readonly #manifests: Map<string, LoadedManifest>
  readonly #pool: SessionPool
  readonly #pipelines: PipelineRefs
  readonly #handles = new Map<string, Handle>()
  /** Pipelines `describe` holds (one reference each, kept until the algorithm is forgotten or the engine closes). */
  readonly #describing = new Map<string, Promise<void>>()
  readonly #intake: ImageIntake

  constructor(options: EngineOptions) {
    const memory = options.memory ?? new MemoryBudget({
      capacityBytes: automaticBudgetBytes(), maxWaiting: settings.decodeQueueMax.default, maxWaitMs: settings.decodeQueueWaitMs.default,
    })
    this.#intake = new ImageIntake({ limits: options.limits, memory, ...(options.shrinkOnLoad !== undefined ? { shrinkOnLoad: options.shrinkOnLoad } : {}) })
    this.#manifests = options.manifestDir === false ? new Map()
      : loadManifests(options.manifestDir ?? defaultManifestDir(options.projectRoot), options.projectRoot, options.dataPath)
    this.#pool = new SessionPool({ intraOpThreads: options.intraOpThreads })
    this.#pipelines = new PipelineRefs(this.#pool)
  }

  /**
   * Adds or replaces an algorithm (runtime/algorithms/registry.ts validated it). Handles
   * already loaded keep the pipeline they loaded; later loads use the new definition once
   * the old pipeline is released.
   */
  define(loaded: LoadedManifest): void {
    this.#manifests.set(loaded.manifest.algorithmId, loaded)
  }

  /** Removes an algorithm; refused while a handle uses it (the registry checks tasks first). */
  forget(algorithmId: string): void {
    const inUse = [...this.#handles].filter(([, h]) => h.algorithmId === algorithmId).map(([handle]) => handle)
    if (inUse.length > 0) throw new EngineError('AlgorithmInUse', `algorithm ${algorithmId} is loaded by ${inUse.length} task(s)`, { algorithmId, tasks: inUse })
    this.#manifests.delete(algorithmId)
    // `describe`'s hold on the pipeline is no task's: it goes with the algorithm.
    const describing = this.#describing.get(algorithmId)
    this.#describing.delete(algorithmId)
    describing?.then(() => this.#pipelines.release(algorithmId), () => {})
  }

  /** spec 3.2: loading an existing handle reuses it (the config is replaced). */
  async load(handle: string, algorithmId: string, config: TaskConfig = {}): Promise<void> {
    const known = this.#manifests.get(algorithmId)
    if (known) checkTaskConfig(known.manifest, config)
    const existing = this.#handles.get(handle)
    if (existing?.algorithmId === algorithmId) {
      await this.#prepare(algorithmId, config)
      existing.config = config
      return
    }
    if (existing) await this.release(handle)
    await this.#pipelines.acquire(algorithmId, this.#manifests.get(algorithmId))
    try {
      await this.#prepare(algorithmId, config)
    } catch (error) {
      await this.#pipelines.release(algorithmId)
      throw error
    }
    this.#handles.set(handle, { algorithmId, config })
  }

  /** The models a task's config chooses (`detectorInputSize`), loaded before its first detection. */
  async #prepare(algorithmId: string, config: TaskConfig): Promise<void> {
    const pipeline = await this.#pipelines.get(algorithmId)
    try {
      await pipeline.prepare(config)
    } catch (error) {
      throw initializeFailed(algorithmId, error)
    }
  }

  async release(handle: string): Promise<void> {
    const h = this.#handles.get(handle)
    if (!h) return
    this.#handles.delete(handle)
    await this.#pipelines.release(h.algorithmId)
  }

  /**
   * The regions of an image (faces, persons, or the whole image, as the algorithm's
   * recognizer says) with their descriptors (gallery registration and search): the
   * algorithm's pipeline runs without a gallery search; the first call loads it, and it stays
   * loaded until the algorithm is forgotten. Returns the result targets a recognizer described.
   */
  async describe(request: { algorithmId: string; image: EngineImage; purpose?: string; pictures?: boolean }): Promise<DescribedRegion[]> {
    let describing = this.#describing.get(request.algorithmId)
    if (!describing) {
      describing = this.#pipelines.acquire(request.algorithmId, this.#manifests.get(request.algorithmId))
      this.#describing.set(request.algorithmId, describing)
      describing.catch(() => { if (this.#describing.get(request.algorithmId) === describing) this.#describing.delete(request.algorithmId) })
    }
    await describing
    const pipeline = await this.#pipelines.get(request.algorithmId)
    if (!pipeline.manifest.nodes.some((n) => n.action === 'recognizer'))
      throw new EngineError('InvalidParam', `algorithm ${request.algorithmId} has no recognizer node`, { algorithmCode: request.algorithmId })
    try {
      // Registration and search images pass the same header checks and memory admission as a detection.
      const opened = await this.#intake.open(request.image, request.purpose ?? 'image')
      const reservation = await this.#intake.admit(opened.width, opened.height, false, {})
      try {
        const image = await opened.decode()
        const output = await pipeline.run(image, {}, undefined)
        // The default area holds every target, in the pipeline's order.
        const targets = buildResult(pipeline.manifest, output, image, {}, Date.now()).areaList[0]!.targetList
        const regions: DescribedRegion[] = []
        const model = descriptorModelOf(pipeline.manifest)!
        for (const [i, work] of output.targets.entries()) {
          if (!work.descriptor) continue
          // The console's picture: the region described, at most 160 × 160 (an aligned face is square).
          const picture = request.pictures && work.described
            ? await sharp(work.described.data, { raw: { width: work.described.width, height: work.described.height, channels: 3 } }).resize(160, 160, { fit: 'inside' }).jpeg({ quality: 85 }).toBuffer()
            : null
          regions.push({ box: targets[i]!.box, score: work.detection.score, landmark: targets[i]!.landmark, descriptor: work.descriptor, model, picture })
        }
        return regions
      } finally {
        reservation.release()
      }
    } catch (error) {
      if (error instanceof ImageError) throw new EngineError(error.errorId, error.message, error.details)
      throw error
    }
  }

  /**
   * Detection = header checks → memory admission → decode → pipeline → result → overlay.
   * The image's memory is reserved from its header before any pixel is decoded and released
   * when the detection ends, whatever its outcome (spec 4.11).
   */
  async detect(request: EngineDetectRequest, recognize?: Recognize): Promise<DetectOutcome> {
    const h = this.#handles.get(request.handle)
    if (!h) throw new EngineError('NotCreated', `no pipeline is loaded under ${request.handle}`)
    const pipeline = await this.#pipelines.get(h.algorithmId)
    const timings: Record<string, number> = {}
    const time = async <T>(stage: string, work: () => Promise<T>): Promise<T> => {
      const started = performance.now()
      try { return await work() } finally { timings[stage] = performance.now() - started }
    }
    const overlay = request.overlay !== false
    try {
      const opened = await time('header', () => this.#intake.open(request.image, request.purpose ?? 'image'))
      const reservation = await time('admission', () => this.#intake.admit(opened.width, opened.height, overlay, request))
      let image: ShrunkImage | undefined
      try {
        image = await time('decode', () => this.#intake.pipelineImage(opened, pipeline, h.config, overlay))
        // Decoded at the detector's size: the stage is named for it (the full pixels, where
        // wanted, are decoded beside the pipeline).
        if (image.shrunk) { timings.decodeScaled = timings.decode!; delete timings.decode }
        const source = image
        const output = await time('pipeline', () => pipeline.run(source, h.config, request.deadline, recognize))
        const result = buildResult(pipeline.manifest, output, source, h.config, Date.now())
        const overlayJpeg = overlay ? await time('overlay', async () => renderOverlay(await source.full(), result, request.jpeg)) : null
        return { result, overlayJpeg, timings: { ...timings, ...Object.fromEntries(Object.entries(output.timings).map(([k, v]) => [`node.${k}`, v])) } }
      } finally {
        // A full decode still running beside (the pipeline failed or ran out of time) holds
        // the memory reserved for it until it ends.
        await image?.settled?.()
        reservation.release()
      }
    } catch (error) {
      if (error instanceof ImageError) throw new EngineError(error.errorId, error.message, error.details)
      if (error instanceof DeadlineExceeded) throw new EngineError('InferenceDeadlineExceeded', error.message, { stage: error.stage })
      throw error
    }
  }

  /**
   * Draws a detection's result over its image and encodes the JPEG: spec 2.6 `fullPicture` in
   * URL mode, rendered when the URL is first fetched instead of inside the detection. Admitted
   * as a detection with an overlay (spec 4.11).
   */
  async renderOverlay(request: { image: EngineImage; result: DetectionResultCore; purpose?: string; jpeg?: JpegSettings; signal?: AbortSignal }): Promise<Buffer> {
    try {
      const opened = await this.#intake.open(request.image, request.purpose ?? 'image')
      const reservation = await this.#intake.admit(opened.width, opened.height, true, request)
      try {
        return await renderOverlay(await opened.decode(), request.result, request.jpeg)
      } finally {
        reservation.release()
      }
    } catch (error) {
      if (error instanceof ImageError) throw new EngineError(error.errorId, error.message, error.details)
      throw error
    }
  }

  /** Decodes an image outside a detection (benchmarks): no memory admission. */
  async decode(image: EngineImage, purpose: string): Promise<RgbImage> {
    return (await this.#intake.open(image, purpose)).decode()
  }

  stats(): SidecarStats {
    return {
      pid: process.pid,
      sessions: this.#pool.stats(),
      pipelines: this.#pipelines.stats(),
      handles: [...this.#handles].map(([handle, h]) => ({ handle, algorithmId: h.algorithmId })),
      memory: this.#intake.memory.stats(),
    }
  }

  async close(): Promise<void> {
    for (const handle of [...this.#handles.keys()]) await this.release(handle)
    for (const [algorithmId, describing] of [...this.#describing]) {
      this.#describing.delete(algorithmId)
      await describing.then(() => this.#pipelines.release(algorithmId), () => {})
    }
  }
}
