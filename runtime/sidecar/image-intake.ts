import type { TaskConfig } from '../../shared/tasks/types.ts'
import { EngineError } from './engine-error.ts'
import { checkPixels, decodePixels, decodeScaled, jpegShrinkOnLoad, readCheckedImage, type CheckedImage, type EncodedSource, type ImageLimits } from './image/decode.ts'
import { ImageError } from './image/image-error.ts'
import { detectionBytes, type MemoryBudget, MemoryBudgetError } from './image/memory-budget.ts'
import type { Pipeline } from './pipeline/pipeline.ts'
import { decodedImage, type PipelineImage } from './pipeline/pipeline-image.ts'
import { inputGeometry, type RgbImage } from './pipeline/rgb-image.ts'

export type EngineImage = EncodedSource | { kind: 'rgb'; width: number; height: number; data: Buffer }

/**
 * A detection's image: `shrunk` when decoded at the detector's size, `settled` resolving once
 * a full decode started beside it has ended.
 */
export type ShrunkImage = PipelineImage & { shrunk?: true; settled?: () => Promise<void> }

/** An image whose header passed the checks (spec 7.1); `checked` for an encoded one. */
export interface OpenedImage { width: number; height: number; checked?: CheckedImage; decode(): Promise<RgbImage> }

export interface ImageIntakeOptions {
  limits: ImageLimits
  memory: MemoryBudget
  /** IMAGE_SHRINK_ON_LOAD (engine.ts EngineOptions.shrinkOnLoad). */
  shrinkOnLoad?: boolean
}

/**
 * How an image enters the sidecar, before any pipeline runs: header checks (spec 7.1), the
 * decode-memory admission (spec 4.11) and the decode itself, at the detector's size where
 * that saves work (docs/detection.md "Decoding at the model's size").
 */
export class ImageIntake {
  readonly #options: ImageIntakeOptions

  constructor(options: ImageIntakeOptions) {
    this.#options = options
  }

  get memory(): MemoryBudget { return this.#options.memory }

  /** Header checks only (spec 7.1); `decode` then allocates the pixels. */
  async open(image: EngineImage, purpose: string): Promise<OpenedImage> {
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

  /** Reserves the memory of a detection on an image of this size (spec 4.11). */
  async admit(width: number, height: number, overlay: boolean, request: { deadline?: number; signal?: AbortSignal }) {
    const memory = this.#options.memory
    const bytes = detectionBytes(width, height, overlay)
    try {
      return await memory.acquire(bytes, {
        ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      })
    } catch (error) {
      if (!(error instanceof MemoryBudgetError)) throw error
      // Larger than the whole budget: as for the pixel limit, only a smaller image helps.
      if (error.reason === 'exceeds-capacity') {
        const limitPixels = Math.floor(memory.capacityBytes / detectionBytes(1, 1, overlay))
        throw new ImageError('IMAGE_RESOLUTION_TOO_LARGE', `${width}x${height} needs ${bytes} bytes, more than the decode memory budget of ${memory.capacityBytes}`, {
          width, height, actualPixels: width * height, limitPixels, resource: 'decode-memory', requiredBytes: bytes, budgetBytes: memory.capacityBytes,
        })
      }
      throw new EngineError('ImageMemoryBusy', error.message, { resource: 'decode-memory', reason: error.reason, ...error.details }, error.retryAfterSeconds)
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
  async pipelineImage(opened: OpenedImage, pipeline: Pipeline, config: TaskConfig, overlay: boolean): Promise<ShrunkImage> {
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
}
