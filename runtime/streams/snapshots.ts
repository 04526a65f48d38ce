import type { Logger } from '../../shared/handler.ts'
import type { ImageQualityService } from '../../shared/system/types.ts'
import type { Frame } from '../cameras/reader.ts'
import { FullFrameUnavailable } from '../cameras/full-frame.ts'
import type { CameraService } from '../cameras/service.ts'
import { loadSharp } from '../load-sharp.ts'
import { frameJpeg } from '../system/image-quality.ts'

/** What a snapshot is, in the payload of its event (docs/events.md "Events"). */
export interface SnapshotInfo {
  /** The JPEG's size. */
  snapshotWidth: number
  snapshotHeight: number
  /** Cut from a frame at the camera's own size (true) or from the analysed frame (false). */
  snapshotFullResolution: boolean
  /** How far (ms) the frame it was cut from is from the analysed frame (0: that frame). */
  snapshotSkewMs: number
  /** Why it is the analysed frame, when a full-resolution one was wanted; else null. */
  snapshotFallback: string | null
}

export interface Snapshot {
  jpeg: Buffer
  info: SnapshotInfo
}

/** Draws the snapshot's boxes: an SVG in the pixels of `picture` (boxes come in the camera's pixels). */
export type SnapshotOverlay = (picture: Frame) => string

export interface SnapshotDeps {
  cameras: Pick<CameraService, 'fullFrame'>
  imageQuality: Pick<ImageQualityService, 'current'>
  log: Logger
  /** SNAPSHOT_FULL_RESOLUTION. */
  fullResolution: boolean
}

/**
 * Snapshots of `object.entered` and `alarm.raised` (docs/cameras-and-stream-tasks.md "Snapshots"):
 * cut from the camera's frame at its own size nearest the analysed frame, the boxes drawn at that
 * size; the analysed frame when the camera has none near enough, with the reason logged and said.
 */
export class Snapshots {
  constructor(private readonly deps: SnapshotDeps) {}

  async take(cameraId: string, frame: Frame, overlay: SnapshotOverlay): Promise<Snapshot> {
    const { picture, fallback } = await this.picture(cameraId, frame)
    // JPEG quality and size cap: System image quality, read at every snapshot.
    const jpeg = await frameJpeg(picture, this.deps.imageQuality.current().snapshot, overlay(picture))
    const sharp = await loadSharp()
    const { width, height } = await sharp(jpeg).metadata()
    return {
      jpeg,
      info: {
        snapshotWidth: width ?? picture.width, snapshotHeight: height ?? picture.height,
        snapshotFullResolution: picture.width === picture.source.width && picture.height === picture.source.height,
        snapshotSkewMs: Math.abs(picture.time - frame.time), snapshotFallback: fallback,
      },
    }
  }

  /** The frame to cut the snapshot from, and why it is the analysed one when a larger one was wanted. */
  private async picture(cameraId: string, frame: Frame): Promise<{ picture: Frame; fallback: string | null }> {
    // Analysed at the camera's own size already (or turned off): nothing to look for.
    if (frame.width >= frame.source.width || !this.deps.fullResolution) return { picture: frame, fallback: this.deps.fullResolution ? null : 'SNAPSHOT_FULL_RESOLUTION is off' }
    try {
      return { picture: await this.deps.cameras.fullFrame(cameraId, frame.time), fallback: null }
    } catch (error) {
      const reason = error instanceof FullFrameUnavailable ? error.reason : `the capture failed: ${(error as Error).message}`
      this.deps.log.warn({ cameraId, reason }, 'snapshot at the analysis size: no full-resolution frame')
      return { picture: frame, fallback: reason }
    }
  }
}

/** The stroke width of a snapshot's boxes: 3 px on the analysed frame, thicker on a large picture. */
export const strokeOf = (picture: { width: number }) => Math.max(3, Math.round(picture.width / 400))
