import * as ort from 'onnxruntime-node'
import type { LoadedManifest } from '../../../models/load-manifests.ts'
import { descriptorModelOf } from '../../../models/descriptor-model.ts'
import { detectorInput, sizeOnlyModels } from '../../../models/input-size.ts'
import type { ClassifierNode, CropNode, DetectorNode, InputSpec, LogicNode, PipelineManifest, RecognizerNode } from '../../../models/manifest-schema.ts'
import { UNKNOWN_LABEL, type Recognize } from '../../../shared/galleries/types.ts'
import type { ConfidenceItem } from '../../../shared/inference/types.ts'
import type { TaskConfig } from '../../../shared/tasks/types.ts'
import type { SessionLease, SessionPool } from '../session-pool.ts'
import { acquireModel, l2normalize } from './model-lease.ts'
import { alignByEyes, alignToTemplate, cropBox, cropQuad } from './crop.ts'
import { checkDeadline } from './deadline.ts'
import { createDecoder, type DetectorDecoder } from './decoders/index.ts'
import type { Detection } from './detection.ts'
import { createHead } from './heads/index.ts'
import type { ClassifierHead } from './heads/types.ts'
import { nonMaxSuppression } from './nms.ts'
import { decodedImage, isRgbImage, type PipelineImage } from './pipeline-image.ts'
import { inputGeometry, prepareInput, rotate180, type PreparedInput, type RgbImage } from './rgb-image.ts'

/** A target while the pipeline works on it; `result.ts` turns it into a spec 2.6 target. */
export interface WorkTarget {
  detection: Detection
  label: string
  confidence: ConfidenceItem[]
  crops: Map<string, RgbImage>
  logic?: boolean
  /** spec 2.6: first values of a feature vector (debug preview). */
  featurePreview?: number[]
  /** A recognizer's descriptor (L2-normalized unless the node says `normalize: false`) and the region it describes (aligned face, box, image). */
  descriptor?: Float32Array
  described?: RgbImage
}

export interface PipelineOutput {
  targets: WorkTarget[]
  logic: LogicNode | null
  timings: Record<string, number>
}

interface RunState {
  image: PipelineImage
  config: TaskConfig
  deadline: number | undefined
  recognize: Recognize | undefined
  targets: Map<string, WorkTarget[]>
  timings: Record<string, number>
}

/**
 * One loaded algorithm: the manifest's nodes run in order over an image (detector → crop →
 * classifier → logic). Holds a lease on each model session it uses; `close()` gives them back.
 */
export class Pipeline {
  readonly manifest: PipelineManifest
  readonly #sessions: Map<string, SessionLease>
  readonly #decoders = new Map<string, DetectorDecoder>()
  readonly #heads = new Map<string, ClassifierHead>()
  readonly #loaded: LoadedManifest
  readonly #pool: SessionPool
  /** Models of other input sizes (`inputSizes`), loaded when a task first chooses one. */
  readonly #sizeSessions = new Map<string, Promise<void>>()

  private constructor(loaded: LoadedManifest, pool: SessionPool, sessions: Map<string, SessionLease>) {
    const { manifest, keyPaths } = loaded
    this.manifest = manifest
    this.#loaded = loaded
    this.#pool = pool
    this.#sessions = sessions
    for (const node of manifest.nodes) {
      if (node.action === 'detector') this.#decoders.set(node.id, createDecoder(node.decoder))
      if (node.action === 'classifier') this.#heads.set(node.id, createHead(node, keyPaths[node.id]))
    }
  }

  /** Acquires (shared) sessions for every model of the manifest and warms them up. */
  static async create(loaded: LoadedManifest, pool: SessionPool): Promise<Pipeline> {
    const sessions = new Map<string, SessionLease>()
    const later = sizeOnlyModels(loaded.manifest)
    try {
      for (const key of Object.keys(loaded.modelPaths)) {
        if (later.has(key)) continue
        sessions.set(key, await acquireModel(loaded, key, pool))
      }
      const pipeline = new Pipeline(loaded, pool, sessions)
      await pipeline.#warmUp()
      return pipeline
    } catch (error) {
      for (const lease of sessions.values()) await lease.release()
      throw error
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#sizeSessions.values())
    for (const lease of this.#sessions.values()) await lease.release()
    this.#sessions.clear()
  }

  /**
   * Loads (once) and warms up the models a task's config chooses (`detectorInputSize`): the
   * engine calls it when a task is loaded, so that its first detection does not.
   */
  async prepare(config: TaskConfig): Promise<void> {
    for (const node of this.manifest.nodes) {
      if (node.action !== 'detector') continue
      const { model, input } = detectorInput(node, config)
      if (this.#sessions.has(model)) continue
      let loading = this.#sizeSessions.get(model)
      if (!loading) {
        loading = (async () => {
          const lease = await acquireModel(this.#loaded, model, this.#pool)
          this.#sessions.set(model, lease)
          await this.#infer(node, await prepareInput({ data: Buffer.alloc(64 * 48 * 3, 128), width: 64, height: 48 }, input), model)
        })()
        this.#sizeSessions.set(model, loading)
        loading.catch(() => { if (this.#sizeSessions.get(model) === loading) this.#sizeSessions.delete(model) })
      }
      await loading
    }
  }

  /** The input and model a detector runs with for a task (models/input-size.ts). */
  detectorInput(node: DetectorNode, config: TaskConfig): { input: InputSpec; model: string } {
    return detectorInput(node, config)
  }

  /** First inference allocates arenas and picks kernels: do it at load, not on a client's request. */
  async #warmUp(): Promise<void> {
    const blank: RgbImage = { data: Buffer.alloc(64 * 48 * 3, 128), width: 64, height: 48 }
    for (const node of this.manifest.nodes)
      if (node.action === 'detector' || node.action === 'classifier' || node.action === 'recognizer') await this.#infer(node, await prepareInput(blank, node.input))
  }

  /**
   * `recognize` searches the galleries for a recognizer's descriptors (the runtime's, over the
   * socket); without it a recognizer only describes the faces (gallery registration, search).
   */
  async run(source: RgbImage | PipelineImage, config: TaskConfig, deadline?: number, recognize?: Recognize): Promise<PipelineOutput> {
    const image = isRgbImage(source) ? decodedImage(source) : source
    const state: RunState = { image, config, deadline, recognize, targets: new Map(), timings: {} }
    let logic: LogicNode | null = null
    const disabled = new Set(config.disabledNodes ?? [])
    for (const node of this.manifest.nodes) {
      if (disabled.has(node.id)) continue
      checkDeadline(deadline, node.id)
      const started = performance.now()
      switch (node.action) {
        case 'detector': await this.#detect(node, state); break
        case 'crop': await this.#crop(node, state); break
        case 'classifier': await this.#classify(node, state); break
        case 'logic': this.#logic(node, state); logic = node; break
        case 'recognizer': await this.#recognize(node, state); break
      }
      state.timings[node.id] = performance.now() - started
    }
    return { targets: state.targets.get(this.manifest.result.targets) ?? [], logic, timings: state.timings }
  }

  #threshold(node: DetectorNode | ClassifierNode, config: TaskConfig): number {
    const own = config.thresholds?.[node.id]
    if (own !== undefined) return own
    if (node.id === this.manifest.result.targets && config.scoreThreshold !== undefined) return config.scoreThreshold
    return node.scoreThreshold
  }

  async #infer(node: DetectorNode | ClassifierNode | RecognizerNode, input: { data: Float32Array; dims: number[] }, model = node.model) {
    const lease = this.#sessions.get(model)
    if (!lease) throw new Error(`model ${model} is not loaded for this task (Pipeline.prepare)`)
    const { session } = lease
    const name = node.input.name ?? session.inputNames[0]!
    return session.run({ [name]: new ort.Tensor('float32', input.data, input.dims) })
  }

  /**
   * A detector reads the image decoded at its input's content size where the engine decoded
   * one (shrink-on-load, docs/detection.md "Decoding at the model's size"); its detections are
   * then mapped to the full image's pixels as from a full decode.
   */
  async #detectorInput(spec: InputSpec, image: PipelineImage): Promise<PreparedInput> {
    const g = inputGeometry(image.width, image.height, spec)
    const scaled = image.scaled(g.contentWidth, g.contentHeight)
    if (!scaled) return prepareInput(await image.full(), spec)
    const input = await prepareInput(await scaled, spec)
    return { ...input, scaleX: image.width / g.contentWidth, scaleY: image.height / g.contentHeight }
  }

  async #detect(node: DetectorNode, state: RunState) {
    const chosen = detectorInput(node, state.config)
    const input = await this.#detectorInput(chosen.input, state.image)
    const outputs = await this.#infer(node, input, chosen.model)
    let detections = this.#decoders.get(node.id)!(outputs as Record<string, ort.Tensor>, input, this.#threshold(node, state.config))
    if (node.nms) detections = nonMaxSuppression(detections, node.nms)
    detections.sort((a, b) => a.box.y - b.box.y || a.box.x - b.box.x)
    state.targets.set(node.id, detections.map((detection) => {
      const label = node.labels[detection.classIndex] ?? String(detection.classIndex)
      return { detection, label, confidence: [{ label, confidence: detection.score }], crops: new Map() }
    }))
  }

  async #crop(node: CropNode, state: RunState) {
    const targets = state.targets.get(node.from) ?? []
    const image = targets.length > 0 ? await state.image.full() : null
    for (const target of targets) {
      const { polygon, box } = target.detection
      const part = node.part
      const region = part ? { x: box.x + box.width * part.x, y: box.y + box.height * part.y, width: box.width * part.width, height: box.height * part.height } : box
      const crop = node.shape === 'polygon' && polygon
        ? cropQuad(image!, polygon, node.rotateTallerThan)
        : cropBox(image!, region, node.padding ?? 0)
      target.crops.set(node.id, crop)
    }
    // Targets of the detector are the same objects under the crop's id.
    state.targets.set(node.id, state.targets.get(node.from) ?? [])
  }

  async #classify(node: ClassifierNode, state: RunState) {
    const threshold = this.#threshold(node, state.config)
    for (const target of state.targets.get(node.from) ?? []) {
      checkDeadline(state.deadline, node.id)
      const crop = target.crops.get(node.from)
      if (!crop) continue
      const outputs = await this.#infer(node, await prepareInput(crop, node.input))
      const result = this.#heads.get(node.id)!(outputs as Record<string, ort.Tensor>, threshold)
      target.confidence.push(...result.labels)
      if (result.featurePreview) target.featurePreview = result.featurePreview
      if (result.rotate) target.crops.set(node.from, rotate180(crop))
    }
  }

  /**
   * Each target of `from` (or the whole image as one target) is cut out (a face aligned by
   * its eyes) and described; with a `recognize` callback the best match in the node's kind of
   * gallery at or above the threshold adds `{label: <name>, confidence: <similarity>}`,
   * anything else `{label: "unknown", confidence: 1 − best similarity}`.
   */
  async #recognize(node: RecognizerNode, state: RunState) {
    const { image: source } = state
    const targets: WorkTarget[] = node.from !== undefined ? state.targets.get(node.from) ?? []
      : [{ detection: { box: { x: 0, y: 0, width: source.width, height: source.height }, score: 1, classIndex: 0 }, label: node.id, confidence: [], crops: new Map() }]
    const image = targets.length > 0 ? await source.full() : null
    for (const target of targets) {
      checkDeadline(state.deadline, node.id)
      const region = this.#region(node, image!, target)
      if (!region) continue
      target.described = region
      const outputs = await this.#infer(node, await prepareInput(region, node.input))
      const tensor = outputs[node.descriptorOutput] as ort.Tensor | undefined
      if (!tensor) throw new Error(`recognizer ${node.id}: output ${node.descriptorOutput} missing`)
      const values = tensor.data as Float32Array
      target.descriptor = node.normalize === false ? Float32Array.from(values) : l2normalize(values)
    }
    state.targets.set(node.id, targets)
    const described = targets.filter((t) => t.descriptor !== undefined)
    if (!state.recognize || described.length === 0) return
    const { recognition } = state.config
    const threshold = state.config.thresholds?.[node.id] ?? recognition?.threshold ?? node.scoreThreshold
    const best = await state.recognize({ kind: node.gallery ?? 'face', descriptors: described.map((t) => t.descriptor!), galleryIds: recognition?.galleryIds ?? [], model: descriptorModelOf(this.manifest, node)! })
    described.forEach((target, i) => {
      const match = best[i]
      target.confidence.push(match && match.similarity >= threshold
        ? { label: match.name, confidence: match.similarity }
        : { label: UNKNOWN_LABEL, confidence: Math.min(1, Math.max(0, 1 - (match?.similarity ?? 0))) })
    })
  }

  /**
   * What a recognizer describes of a target: the face aligned by its eyes or onto the node's
   * template (none without every keypoint it needs), the box, or the image itself.
   */
  #region(node: RecognizerNode, image: RgbImage, target: WorkTarget): RgbImage | null {
    if (node.from === undefined) return image
    const { align } = node
    if (!align) return cropBox(image, target.detection.box)
    const found = target.detection.keypoints
    if ('kind' in align) {
      const points = align.keypoints.map((k) => found?.[k])
      // The input's width and height are required with a template (models/load-manifests.ts).
      return points.every((p) => p !== undefined) ? alignToTemplate(image, points, align.template, align.padding, node.input.width!, node.input.height!, align.filter) : null
    }
    const [a, b] = align.eyes as [number, number]
    return found?.[a] && found[b] ? alignByEyes(image, found[a], found[b], align.scale, align.eyeLine) : null
  }

  #logic(node: LogicNode, state: RunState) {
    for (const target of state.targets.get(this.manifest.result.targets) ?? [])
      target.logic = target.confidence.some((c) => c.label === node.condition.label && c.confidence >= node.condition.minConfidence)
  }
}
