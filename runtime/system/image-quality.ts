import type { Db } from '../db/client.ts'
import type { Logger } from '../../shared/handler.ts'
import { JPEG_KINDS, type ImageQuality, type ImageQualityService, type JpegKind, type JpegSettings } from '../../shared/system/types.ts'
import { loadSharp } from '../load-sharp.ts'
import { storedSetting } from './stored-setting.ts'

/** The device's JPEGs before any setting: the qualities each encoder used until now, full size. */
export const DEFAULT_IMAGE_QUALITY: ImageQuality = {
  overlay: { quality: 80, maxSide: 0 },
  snapshot: { quality: 80, maxSide: 0 },
  capture: { quality: 85, maxSide: 0 },
}

/**
 * `ctx.imageQuality` (spec 4.10 System "image quality"): one place the encoders read their
 * JPEG quality and size cap from, at every picture, so a change applies to the next one.
 */
export class StoredImageQuality implements ImageQualityService {
  readonly #stored: ReturnType<typeof storedSetting<ImageQuality>>
  #current: ImageQuality = structuredClone(DEFAULT_IMAGE_QUALITY)

  constructor(private readonly options: { db: Db; now: () => number; log: Logger }) {
    this.#stored = storedSetting<ImageQuality>(options.db, 'system.imageQuality', options.now)
  }

  async start(): Promise<void> {
    const stored = await this.#stored.read()
    if (stored) this.#current = merge(this.#current, stored)
  }

  current(): ImageQuality {
    return structuredClone(this.#current)
  }

  async set(change: Partial<Record<JpegKind, Partial<JpegSettings>>>): Promise<ImageQuality> {
    const next = merge(this.#current, change)
    await this.#stored.write(next)
    this.#current = next
    this.options.log.info({ imageQuality: next }, 'image quality changed')
    return this.current()
  }
}

const merge = (base: ImageQuality, change: Partial<Record<JpegKind, Partial<JpegSettings>>>): ImageQuality =>
  Object.fromEntries(JPEG_KINDS.map((kind) => [kind, { ...base[kind], ...change[kind] }])) as ImageQuality

/**
 * A raw RGB frame as JPEG under `settings`; an SVG drawn over it first (a snapshot's box), in
 * the frame's own pixels, before the picture is scaled down to `maxSide`.
 */
export async function frameJpeg(frame: { rgb: Buffer; width: number; height: number }, settings: JpegSettings, svg?: string): Promise<Buffer> {
  const raw = { width: frame.width, height: frame.height, channels: 3 as const }
  const shrink = settings.maxSide > 0 && Math.max(frame.width, frame.height) > settings.maxSide
  const sharp = await loadSharp()
  let picture = sharp(frame.rgb, { raw })
  if (svg && shrink) picture = sharp(await picture.composite([{ input: Buffer.from(svg) }]).raw().toBuffer(), { raw: { ...raw, channels: 4 } })
  else if (svg) picture = picture.composite([{ input: Buffer.from(svg) }])
  if (shrink) picture = picture.resize(settings.maxSide, settings.maxSide, { fit: 'inside' })
  return picture.jpeg({ quality: settings.quality }).toBuffer()
}
