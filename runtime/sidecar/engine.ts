import { defaultManifestDir, loadManifests, type LoadedManifest } from '../../models/load-manifests.ts'
import { descriptorModelOf } from '../../models/descriptor-model.ts'
import { offeredInputSizes } from '../../models/input-size.ts'
import { settings } from '../../shared/config.ts'
import type { DetectionResultCore, DetectOutcome, SidecarStats } from '../../shared/inference/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import type { DescribedRegion, Recognize } from '../../shared/galleries/types.ts'
import sharp from 'sharp'
import { EngineError } from './engine-error.ts'
import { checkPixels, decodePixels, decodeScaled, jpegShrinkOnLoad, readCheckedImage, type CheckedImage, type EncodedSource, type ImageLimits } from './image/decode.ts'
import { ImageError } from './image/image-error.ts'
import { automaticBudgetBytes, detectionBytes, MemoryBudget, MemoryBudgetError } from './image/memory-budget.ts'
import { DeadlineExceeded } from './pipeline/deadline.ts'
import { renderOverlay } from './pipeline/overlay.ts'
import type { JpegSettings } from '../../shared/system/types.ts'
import { MissingModelError } from './pipeline/model-lease.ts'
import { Pipeline } from './pipeline/pipeline.ts'
import { buildResult } from './pipeline/result.ts'
import { decodedImage, type PipelineImage } from './pipeline/pipeline-image.ts'
import { inputGeometry, type RgbImage } from './pipeline/rgb-image.ts'
import { SessionPool } from './session-pool.ts'

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

export type EngineImage = EncodedSource | { kind: 'rgb'; width: number; height: number; data: Buffer }

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

/**
 * A detection's image: `shrunk` when decoded at the detector's size, `settled` resolving once
 * a full decode started beside it has ended.
 */
type ShrunkImage = PipelineImage & { shrunk?: true; settled?: () => Promise<void> }

/** An image whose header passed the checks (spec 7.1); `checked` for an encoded one. */
interface OpenedImage { width: number; height: number; checked?: CheckedImage; decode(): Promise<RgbImage> }

interface LoadedPipeline { pipeline: Promise<Pipeline>; refs: number }
interface Handle { algorithmId: string; config: TaskConfig }

/**
 * Everything the sidecar does, without the socket: pipelines by algorithm (shared by the
 * handles that use them, released with the last one), model sessions by file (shared by
 * pipelines), and detection = decode → pipeline → result → overlay. The benchmark's
 * in-process baseline uses this class directly.
 */
export class InferenceEngine {
  readonly #manifests: Map<string, LoadedManifest>
  readonly #pool: SessionPool
  readonly #pipelines = new Map<string, LoadedPipeline>()
  readonly #handles = new Map<string, Handle>()
  /** Pipelines `describe` holds (one reference each, kept until the algorithm is forgotten or the engine closes). */
  readonly #describing = new Map<string, Promise<void>>()
  readonly #options: EngineOptions
  readonly #memory: MemoryBudget

  constructor(options: EngineOptions) {
    this.#options = options
    this.#memory = options.memory ?? new MemoryBudget({
      capacityBytes: automaticBudgetBytes(), maxWaiting: settings.decodeQueueMax.default, maxWaitMs: settings.decodeQueueWaitMs.default,
    })
    this.#manifests = options.manifestDir === false ? new Map()
      : loadManifests(options.manifestDir ?? defaultManifestDir(options.projectRoot), options.projectRoot, options.dataPath)
    this.#pool = new SessionPool({ intraOpThreads: options.intraOpThreads })
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
    describing?.then(() => this.#unref(algorithmId), () => {})
  }

  /** spec 3.2: loading an existing handle reuses it (the config is replaced). */
  async load(handle: string, algorithmId: string, config: TaskConfig = {}): Promise<void> {
    const known = this.#manifests.get(algorithmId)
    if (known) { checkDisabledNodes(known.manifest, config); checkInputSize(known.manifest, config) }
    const existing = this.#handles.get(handle)
    if (existing?.algorithmId === algorithmId) {
      await this.#prepare(algorithmId, config)
      existing.config = config
      return
    }
    if (existing) await this.release(handle)
    await this.#acquire(algorithmId)
    try {
      await this.#prepare(algorithmId, config)
    } catch (error) {
      await this.#unref(algorithmId)
      throw error
    }
    this.#handles.set(handle, { algorithmId, config })
  }

  /** The models a task's config chooses (`detectorInputSize`), loaded before its first detection. */
  async #prepare(algorithmId: string, config: TaskConfig): Promise<void> {
    const pipeline = await this.#pipelines.get(algorithmId)!.pipeline
    try {
      await pipeline.prepare(config)
    } catch (error) {
      const missing = error instanceof MissingModelError ? { missingModel: error.modelId } : {}
      throw new EngineError('TaskCreateFailed', `pipeline ${algorithmId} failed to initialize: ${(error as Error).message}`, { algorithmCode: algorithmId, ...missing })
    }
  }

  /** A reference on the algorithm's pipeline, created (sessions loaded, warmed) by the first. */
  async #acquire(algorithmId: string): Promise<void> {
    const loaded = this.#manifests.get(algorithmId)
    if (!loaded) throw new EngineError('ActionAlgLoadFailed', `unknown algorithm ${algorithmId}`, { algorithmCode: algorithmId })
    let entry = this.#pipelines.get(algorithmId)
    if (!entry) {
      entry = { pipeline: Pipeline.create(loaded, this.#pool), refs: 0 }
      this.#pipelines.set(algorithmId, entry)
    }
    entry.refs++
    try {
      await entry.pipeline
    } catch (error) {
      entry.refs--
      if (entry.refs === 0) this.#pipelines.delete(algorithmId)
      const missing = error instanceof MissingModelError ? { missingModel: error.modelId } : {}
      throw new EngineError('TaskCreateFailed', `pipeline ${algorithmId} failed to initialize: ${(error as Error).message}`, { algorithmCode: algorithmId, ...missing })
    }
  }

  async #unref(algorithmId: string): Promise<void> {
    const entry = this.#pipelines.get(algorithmId)
    if (!entry) return
    entry.refs--
    if (entry.refs === 0) {
      this.#pipelines.delete(algorithmId)
      await (await entry.pipeline).close()
    }
  }

  async release(handle: string): Promise<void> {
    const h = this.#handles.get(handle)
    if (!h) return
    this.#handles.delete(handle)
    await this.#unref(h.algorithmId)
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
      describing = this.#acquire(request.algorithmId)
      this.#describing.set(request.algorithmId, describing)
      describing.catch(() => { if (this.#describing.get(request.algorithmId) === describing) this.#describing.delete(request.algorithmId) })
    }
    await describing
    const pipeline = await this.#pipelines.get(request.algorithmId)!.pipeline
    if (!pipeline.manifest.nodes.some((n) => n.action === 'recognizer'))
      throw new EngineError('InvalidParam', `algorithm ${request.algorithmId} has no recognizer node`, { algorithmCode: request.algorithmId })
    try {
      // Registration and search images pass the same header checks and memory admission as a detection.
      const opened = await this.#open(request.image, request.purpose ?? 'image')
      const reservation = await this.#admit(opened.width, opened.height, false, {})
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
    const pipeline = await this.#pipelines.get(h.algorithmId)!.pipeline
    const timings: Record<string, number> = {}
    const time = async <T>(stage: string, work: () => Promise<T>): Promise<T> => {
      const started = performance.now()
      try { return await work() } finally { timings[stage] = performance.now() - started }
    }
    const overlay = request.overlay !== false
    try {
      const opened = await time('header', () => this.#open(request.image, request.purpose ?? 'image'))
      const reservation = await time('admission', () => this.#admit(opened.width, opened.height, overlay, request))
      let image: ShrunkImage | undefined
      try {
        image = await time('decode', () => this.#pipelineImage(opened, pipeline, h.config, overlay))
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
      const opened = await this.#open(request.image, request.purpose ?? 'image')
      const reservation = await this.#admit(opened.width, opened.height, true, request)
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

  /**
   * The image a detection's pipeline runs on (docs/detection.md "Decoding at the model's
   * size"). A JPEG whose first detector reads a smaller letterboxed or stretched image is
   * decoded at that size (shrink-on-load); its full pixels are decoded beside it, at the same
   * time (the other core, while the detector runs), only when the overlay, a crop, a
   * classifier, a recognizer or another detector needs them, else never. Anything else is
   * decoded in full first, as before. Resolves when the detector's pixels are there.
   */
  async #pipelineImage(opened: OpenedImage, pipeline: Pipeline, config: TaskConfig, overlay: boolean): Promise<ShrunkImage> {
    const checked = opened.checked
    const disabled = new Set(config.disabledNodes ?? [])
    const nodes = pipeline.manifest.nodes.filter((n) => !disabled.has(n.id) && n.action !== 'logic')
    const first = nodes[0]
    const input = first?.action === 'detector' ? pipeline.detectorInput(first, config).input : undefined
    if (this.#options.shrinkOnLoad === false || checked?.format !== 'jpeg' || !input ||
      (input.resize !== 'letterbox' && input.resize !== 'stretch'))
      return decodedImage(await opened.decode())
    const { width, height } = checked.upright
    const g = inputGeometry(width, height, input)
    // Without a libjpeg step (an image less than 4× the model's input on an axis) the small
    // image would cost a full decode of its own: decoded in full once, as before.
    if (jpegShrinkOnLoad(width, height, g.contentWidth, g.contentHeight) === 1) return decodedImage(await opened.decode())
    const limits = this.#options.limits
    let full: Promise<RgbImage> | undefined
    const decodeFull = () => (full ??= decodePixels(checked, limits))
    const needsFull = overlay || nodes.length > 1
    if (needsFull) decodeFull().catch(() => {})
    const scaled = decodeScaled(checked, limits, g.contentWidth, g.contentHeight)
    const settled = async () => { await full?.catch(() => {}) }
    try {
      await scaled
    } catch (error) {
      await settled()
      throw error
    }
    return {
      width, height, shrunk: true, settled,
      full: decodeFull,
      scaled: (w, h) => (w === g.contentWidth && h === g.contentHeight ? scaled : null),
    }
  }

  /** Header checks only (spec 7.1); `decode` then allocates the pixels. */
  async #open(image: EngineImage, purpose: string): Promise<OpenedImage> {
    const { limits } = this.#options
    if (image.kind === 'rgb') {
      checkPixels(image.width, image.height, limits)
      if (image.data.length !== image.width * image.height * 3)
        throw new ImageError('ImageDecodeFailed', `raw frame has ${image.data.length} bytes, expected ${image.width}x${image.height}x3`)
      return { width: image.width, height: image.height, decode: async () => ({ data: image.data, width: image.width, height: image.height }) }
    }
    const checked = await readCheckedImage(image, limits, purpose)
    return { width: checked.width, height: checked.height, checked, decode: () => decodePixels(checked, limits) }
  }

  /** Decodes an image outside a detection (benchmarks): no memory admission. */
  async decode(image: EngineImage, purpose: string): Promise<RgbImage> {
    return (await this.#open(image, purpose)).decode()
  }

  async #admit(width: number, height: number, overlay: boolean, request: { deadline?: number; signal?: AbortSignal }) {
    const bytes = detectionBytes(width, height, overlay)
    try {
      return await this.#memory.acquire(bytes, {
        ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      })
    } catch (error) {
      if (!(error instanceof MemoryBudgetError)) throw error
      // Larger than the whole budget: as for the pixel limit, only a smaller image helps.
      if (error.reason === 'exceeds-capacity') {
        const limitPixels = Math.floor(this.#memory.capacityBytes / detectionBytes(1, 1, overlay))
        throw new ImageError('IMAGE_RESOLUTION_TOO_LARGE', `${width}x${height} needs ${bytes} bytes, more than the decode memory budget of ${this.#memory.capacityBytes}`, {
          width, height, actualPixels: width * height, limitPixels, resource: 'decode-memory', requiredBytes: bytes, budgetBytes: this.#memory.capacityBytes,
        })
      }
      throw new EngineError('ImageMemoryBusy', error.message, { resource: 'decode-memory', reason: error.reason, ...error.details }, error.retryAfterSeconds)
    }
  }

  stats(): SidecarStats {
    return {
      pid: process.pid,
      sessions: this.#pool.stats(),
      pipelines: [...this.#pipelines].map(([algorithmId, e]) => ({ algorithmId, refs: e.refs })),
      handles: [...this.#handles].map(([handle, h]) => ({ handle, algorithmId: h.algorithmId })),
      memory: this.#memory.stats(),
    }
  }

  async close(): Promise<void> {
    for (const handle of [...this.#handles.keys()]) await this.release(handle)
    for (const [algorithmId, describing] of [...this.#describing]) {
      this.#describing.delete(algorithmId)
      await describing.then(() => this.#unref(algorithmId), () => {})
    }
  }
}

/** `taskConfig.detectorInputSize` must be a size the algorithm's detector offers (models/input-size.ts). */
function checkInputSize(manifest: LoadedManifest['manifest'], config: TaskConfig): void {
  const size = config.detectorInputSize
  if (size === undefined) return
  const offered = offeredInputSizes(manifest)
  if (!offered.includes(size))
    throw new EngineError('InvalidParam', offered.length === 0
      ? `taskConfig.detectorInputSize: ${manifest.algorithmId} has one input size only`
      : `taskConfig.detectorInputSize: ${size} is not one of ${manifest.algorithmId}'s input sizes (${offered.join(', ')})`,
    { field: '/taskConfig/detectorInputSize', value: size, offered })
}

/** `taskConfig.disabledNodes` must name nodes of the pipeline, never its result detector. */
function checkDisabledNodes(manifest: LoadedManifest['manifest'], config: TaskConfig): void {
  for (const id of config.disabledNodes ?? []) {
    if (!manifest.nodes.some((n) => n.id === id))
      throw new EngineError('InvalidParam', `taskConfig.disabledNodes: ${id} is not a node of ${manifest.algorithmId}`, { field: '/taskConfig/disabledNodes', nodeId: id })
    if (id === manifest.result.targets)
      throw new EngineError('InvalidParam', `taskConfig.disabledNodes: ${id} produces the result targets and cannot be disabled`, { field: '/taskConfig/disabledNodes', nodeId: id })
  }
}
