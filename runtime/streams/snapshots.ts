import type { Logger } from '../../shared/handler.ts'
import type { ImageQualityService, JpegSettings } from '../../shared/system/types.ts'
import type { Frame } from '../cameras/reader.ts'
import { FullFrameUnavailable } from '../cameras/full-frame.ts'
import type { CameraService } from '../cameras/service.ts'
import { loadSharp } from '../load-sharp.ts'

/** What a snapshot is, in the payload of its event (docs/events.md "Events"). */
export interface SnapshotInfo {
  /** The JPEG's size. */
  snapshotWidth: number
  snapshotHeight: number
  /** Cut from a frame at the camera's own size (true) or from the analysed frame (false). */
  snapshotFullResolution: boolean
  /** How far (ms) after the analysed frame the frame it was cut from is (0: that frame; down to -SAME_MOMENT_MS: the same moment). */
  snapshotSkewMs: number
  /** Why it is the analysed frame, when a full-resolution one was wanted; else null. */
  snapshotFallback: string | null
}

export interface Snapshot {
  jpeg: Buffer
  info: SnapshotInfo
}

type Box = { x: number; y: number; width: number; height: number }
/** What a snapshot shows over its picture, in the picture's pixels: box outlines and text labels (colours `#rrggbb`). */
export interface SnapshotMarks {
  boxes: { box: Box; colour: string }[]
  labels?: { text: string; x: number; y: number; colour: string }[]
}
/** The marks of a snapshot on `picture` (boxes come in the camera's pixels: scale them with inFramePixels). */
export type SnapshotOverlay = (picture: Frame) => SnapshotMarks

export interface SnapshotDeps {
  cameras: Pick<CameraService, 'fullFrame' | 'armFullFrames'>
  imageQuality: Pick<ImageQualityService, 'current'>
  log: Logger
  /** SNAPSHOT_FULL_RESOLUTION. */
  fullResolution: boolean
}

/**
 * Snapshots of `object.entered` and `alarm.raised` (docs/cameras-and-stream-tasks.md "Snapshots"):
 * cut from the camera's first frame at its own size at or after the analysed frame, the boxes drawn
 * at that size; the analysed frame when none comes in time, with the reason logged and said.
 */
export class Snapshots {
  constructor(private readonly deps: SnapshotDeps) {}

  /**
   * Starts the search for the full-resolution frame of `frame` now, while it is detected, when its
   * detection may need a snapshot: a `take` of the same frame then joins it (CameraService.fullFrame).
   */
  prepare(cameraId: string, frame: Frame): void {
    if (frame.width >= frame.source.width || !this.deps.fullResolution) return
    // A refusal or a frame too late is said by the take that needs it, if one does.
    this.deps.cameras.fullFrame(cameraId, frame).catch(() => {})
  }

  /**
   * A task's next detections may want a snapshot (a tentative object, confirmed at its next sighting):
   * the camera's reader runs at its burst rate for the next `ms` and keeps its last frames, so the
   * frame at or after the next analysed frame is there when its search starts.
   */
  arm(cameraId: string, frame: Frame, ms: number): void {
    if (frame.width >= frame.source.width || !this.deps.fullResolution) return
    this.deps.cameras.armFullFrames(cameraId, ms)
  }

  async take(cameraId: string, frame: Frame, overlay: SnapshotOverlay): Promise<Snapshot> {
    const { picture, skewMs, fallback } = await this.picture(cameraId, frame)
    // JPEG quality and size cap: System image quality, read at every snapshot.
    const jpeg = await marked(picture, overlay(picture), this.deps.imageQuality.current().snapshot)
    const sharp = await loadSharp()
    const { width, height } = await sharp(jpeg).metadata()
    return {
      jpeg,
      info: {
        snapshotWidth: width ?? picture.width, snapshotHeight: height ?? picture.height,
        snapshotFullResolution: picture.width === picture.source.width && picture.height === picture.source.height,
        snapshotSkewMs: Math.round(skewMs), snapshotFallback: fallback,
      },
    }
  }

  /** The frame to cut the snapshot from, and why it is the analysed one when a larger one was wanted. */
  private async picture(cameraId: string, frame: Frame): Promise<{ picture: Frame; skewMs: number; fallback: string | null }> {
    // Analysed at the camera's own size already (or turned off): nothing to look for.
    if (frame.width >= frame.source.width || !this.deps.fullResolution) return { picture: frame, skewMs: 0, fallback: this.deps.fullResolution ? null : 'SNAPSHOT_FULL_RESOLUTION is off' }
    try {
      const found = await this.deps.cameras.fullFrame(cameraId, frame)
      return { picture: found.frame, skewMs: found.skewMs, fallback: null }
    } catch (error) {
      const reason = error instanceof FullFrameUnavailable ? error.reason : `the capture failed: ${(error as Error).message}`
      this.deps.log.warn({ cameraId, reason }, 'snapshot at the analysis size: no full-resolution frame')
      return { picture: frame, skewMs: 0, fallback: reason }
    }
  }
}

/** The stroke width of a snapshot's boxes: 3 px on the analysed frame, thicker on a large picture. */
export const strokeOf = (picture: { width: number }) => Math.max(3, Math.round(picture.width / 400))

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * The picture with its marks as JPEG. Outlines are drawn into a copy of the pixels and labels
 * are small SVGs placed where they go: an SVG as large as a full-size picture costs three times
 * the JPEG itself (bench/snapshot-cpu.bench.ts).
 */
async function marked(picture: Frame, marks: SnapshotMarks, settings: JpegSettings): Promise<Buffer> {
  const { width, height } = picture
  const stroke = strokeOf(picture)
  const rgb = Buffer.from(picture.rgb)
  for (const { box, colour } of marks.boxes) outline(rgb, width, height, box, stroke, colour)
  const font = stroke * 5 + 1
  const labels = (marks.labels ?? []).flatMap(({ text, x, y, colour }) => {
    const left = Math.max(0, Math.min(width - 1, Math.round(x)))
    const top = Math.max(0, Math.min(height - 1, Math.round(y - font)))
    const w = Math.min(width - left, Math.ceil(text.length * font * 0.65) + 8)
    const h = Math.min(height - top, Math.ceil(font * 1.3))
    if (w <= 0 || h <= 0) return []
    const svg = `<svg width="${w}" height="${h}"><text x="0" y="${font}" font-family="sans-serif" font-size="${font}" fill="${colour}">${escapeXml(text)}</text></svg>`
    return [{ input: Buffer.from(svg), left, top }]
  })
  const sharp = await loadSharp()
  const raw = { width, height, channels: 3 as const }
  const shrink = settings.maxSide > 0 && Math.max(width, height) > settings.maxSide
  let image = sharp(rgb, { raw })
  if (labels.length > 0 && shrink) image = sharp(await image.composite(labels).raw().toBuffer(), { raw: { ...raw, channels: 4 } })
  else if (labels.length > 0) image = image.composite(labels)
  if (shrink) image = image.resize(settings.maxSide, settings.maxSide, { fit: 'inside' })
  return image.jpeg({ quality: settings.quality }).toBuffer()
}

/** A box's outline, `stroke` pixels wide and centred on its edges (as an SVG rect draws it), clipped to the picture. */
function outline(rgb: Buffer, width: number, height: number, box: Box, stroke: number, colour: string): void {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16)) as [number, number, number]
  const half = Math.floor(stroke / 2)
  const fill = (x0: number, y0: number, x1: number, y1: number) => {
    const xa = Math.max(0, x0), xb = Math.min(width, x1), ya = Math.max(0, y0), yb = Math.min(height, y1)
    for (let y = ya; y < yb; y++)
      for (let x = xa; x < xb; x++) {
        const i = (y * width + x) * 3
        rgb[i] = r
        rgb[i + 1] = g
        rgb[i + 2] = b
      }
  }
  const left = Math.round(box.x) - half, top = Math.round(box.y) - half
  const right = Math.round(box.x + box.width) - half, bottom = Math.round(box.y + box.height) - half
  fill(left, top, right + stroke, top + stroke)
  fill(left, bottom, right + stroke, bottom + stroke)
  fill(left, top, left + stroke, bottom + stroke)
  fill(right, top, right + stroke, bottom + stroke)
}
