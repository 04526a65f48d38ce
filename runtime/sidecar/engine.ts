import { defaultManifestDir, loadManifests, type LoadedManifest } from '../../models/load-manifests.ts'
import type { DetectOutcome, SidecarStats } from '../../shared/inference/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import type { DescribedFace, Recognize } from '../../shared/galleries/types.ts'
import sharp from 'sharp'
import { EngineError } from './engine-error.ts'
import { checkPixels, decodeImage, type EncodedSource, type ImageLimits } from './image/decode.ts'
import { ImageError } from './image/image-error.ts'
import { DeadlineExceeded } from './pipeline/deadline.ts'
import { renderOverlay } from './pipeline/overlay.ts'
import { MissingModelError, Pipeline } from './pipeline/pipeline.ts'
import { buildResult } from './pipeline/result.ts'
import type { RgbImage } from './pipeline/rgb-image.ts'
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
}

export type EngineImage = EncodedSource | { kind: 'rgb'; width: number; height: number; data: Buffer }

export interface EngineDetectRequest {
  handle: string
  image: EngineImage
  purpose?: string
  deadline?: number
  overlay?: boolean
}

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
  /** Pipelines describeFaces holds (one reference each, kept until the algorithm is forgotten or the engine closes). */
  readonly #describing = new Map<string, Promise<void>>()
  readonly #options: EngineOptions

  constructor(options: EngineOptions) {
    this.#options = options
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
    // describeFaces' hold on the pipeline is no task's: it goes with the algorithm.
    const describing = this.#describing.get(algorithmId)
    this.#describing.delete(algorithmId)
    describing?.then(() => this.#unref(algorithmId), () => {})
  }

  /** spec 3.2: loading an existing handle reuses it (the config is replaced). */
  async load(handle: string, algorithmId: string, config: TaskConfig = {}): Promise<void> {
    const known = this.#manifests.get(algorithmId)
    if (known) checkDisabledNodes(known.manifest, config)
    const existing = this.#handles.get(handle)
    if (existing) {
      if (existing.algorithmId === algorithmId) { existing.config = config; return }
      await this.release(handle)
    }
    await this.#acquire(algorithmId)
    this.#handles.set(handle, { algorithmId, config })
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

  async decode(image: EngineImage, purpose: string): Promise<RgbImage> {
    if (image.kind !== 'rgb') return decodeImage(image, this.#options.limits, purpose)
    checkPixels(image.width, image.height, this.#options.limits)
    if (image.data.length !== image.width * image.height * 3)
      throw new ImageError('ImageDecodeFailed', `raw frame has ${image.data.length} bytes, expected ${image.width}x${image.height}x3`)
    return { data: image.data, width: image.width, height: image.height }
  }

  /**
   * The faces of an image with their descriptors (gallery registration and search): the
   * algorithm's pipeline runs without a gallery search; the first call loads it, and it stays
   * loaded until the algorithm is forgotten. Returns the result targets a recognizer described.
   */
  async describeFaces(request: { algorithmId: string; image: EngineImage; purpose?: string; pictures?: boolean }): Promise<DescribedFace[]> {
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
      const image = await this.decode(request.image, request.purpose ?? 'image')
      const output = await pipeline.run(image, {}, undefined)
      // The default area holds every target, in the pipeline's order.
      const targets = buildResult(pipeline.manifest, output, image, {}, Date.now()).areaList[0]!.targetList
      const faces: DescribedFace[] = []
      for (const [i, work] of output.targets.entries()) {
        if (!work.descriptor) continue
        const picture = request.pictures && work.aligned
          ? await sharp(work.aligned.data, { raw: { width: work.aligned.width, height: work.aligned.height, channels: 3 } }).resize(160, 160).jpeg({ quality: 85 }).toBuffer()
          : null
        faces.push({ box: targets[i]!.box, score: work.detection.score, landmark: targets[i]!.landmark, descriptor: work.descriptor, picture })
      }
      return faces
    } catch (error) {
      if (error instanceof ImageError) throw new EngineError(error.errorId, error.message, error.details)
      throw error
    }
  }

  async detect(request: EngineDetectRequest, recognize?: Recognize): Promise<DetectOutcome> {
    const h = this.#handles.get(request.handle)
    if (!h) throw new EngineError('NotCreated', `no pipeline is loaded under ${request.handle}`)
    const pipeline = await this.#pipelines.get(h.algorithmId)!.pipeline
    const timings: Record<string, number> = {}
    const time = async <T>(stage: string, work: () => Promise<T>): Promise<T> => {
      const started = performance.now()
      try { return await work() } finally { timings[stage] = performance.now() - started }
    }
    try {
      const image = await time('decode', () => this.decode(request.image, request.purpose ?? 'image'))
      const output = await time('pipeline', () => pipeline.run(image, h.config, request.deadline, recognize))
      const result = buildResult(pipeline.manifest, output, image, h.config, Date.now())
      const overlayJpeg = request.overlay === false ? null : await time('overlay', () => renderOverlay(image, result))
      return { result, overlayJpeg, timings: { ...timings, ...Object.fromEntries(Object.entries(output.timings).map(([k, v]) => [`node.${k}`, v])) } }
    } catch (error) {
      if (error instanceof ImageError) throw new EngineError(error.errorId, error.message, error.details)
      if (error instanceof DeadlineExceeded) throw new EngineError('InferenceDeadlineExceeded', error.message, { stage: error.stage })
      throw error
    }
  }

  stats(): SidecarStats {
    return {
      pid: process.pid,
      sessions: this.#pool.stats(),
      pipelines: [...this.#pipelines].map(([algorithmId, e]) => ({ algorithmId, refs: e.refs })),
      handles: [...this.#handles].map(([handle, h]) => ({ handle, algorithmId: h.algorithmId })),
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

/** `taskConfig.disabledNodes` must name nodes of the pipeline, never its result detector. */
function checkDisabledNodes(manifest: LoadedManifest['manifest'], config: TaskConfig): void {
  for (const id of config.disabledNodes ?? []) {
    if (!manifest.nodes.some((n) => n.id === id))
      throw new EngineError('InvalidParam', `taskConfig.disabledNodes: ${id} is not a node of ${manifest.algorithmId}`, { field: '/taskConfig/disabledNodes', nodeId: id })
    if (id === manifest.result.targets)
      throw new EngineError('InvalidParam', `taskConfig.disabledNodes: ${id} produces the result targets and cannot be disabled`, { field: '/taskConfig/disabledNodes', nodeId: id })
  }
}
