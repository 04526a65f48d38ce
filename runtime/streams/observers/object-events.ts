import type { Config } from '../../../shared/config.ts'
import type { EventsService } from '../../../shared/events/types.ts'
import type { ImageQualityService } from '../../../shared/system/types.ts'
import { frameJpeg } from '../../system/image-quality.ts'
import { keepRenderedPicture } from '../../tasks/full-picture.ts'
import type { Frame } from '../../cameras/reader.ts'
import { inFramePixels } from '../analysis-size.ts'
import type { Track } from '../tracker.ts'
import type { StreamObserverFactory } from './types.ts'

export interface ObjectEventDeps {
  config: Config
  events: EventsService
  imageQuality: Pick<ImageQualityService, 'current'>
}

/** The snapshot of an entering object: the analysed frame with its box drawn (box in the camera's pixels, drawn at the frame's size), kept and served by URL. */
async function snapshot(track: Track, frame: Frame, deps: ObjectEventDeps): Promise<string> {
  const { x, y, width, height } = inFramePixels(track.box, frame)
  const svg = `<svg width="${frame.width}" height="${frame.height}"><rect x="${x}" y="${y}" width="${width}" height="${height}" fill="none" stroke="#00ff00" stroke-width="3"/></svg>`
  // JPEG quality and size cap: System image quality, read at every snapshot.
  const jpeg = await frameJpeg(frame, deps.imageQuality.current().snapshot, svg)
  return (await keepRenderedPicture(jpeg, deps.config)).url
}

/** Events per object, not per frame (docs/cameras-and-stream-tasks.md "Stream tasks"): `object.entered` with a snapshot, `object.left` with the dwell. */
export const objectEvents = (deps: ObjectEventDeps): StreamObserverFactory => (row) => {
  const left = async (tracks: readonly Track[]) => {
    for (const track of tracks)
      await deps.events.emit('object.left', {
        taskId: row.taskId, cameraId: row.cameraId, objectId: track.id, label: track.label, dwellMs: track.lastSeen - track.firstSeen,
      })
  }
  return {
    async onAnalysis({ frame, entered, left: gone }) {
      for (const track of entered)
        await deps.events.emit('object.entered', {
          taskId: row.taskId, cameraId: row.cameraId, objectId: track.id, label: track.label, confidence: track.confidence, box: track.box,
          snapshotUrl: await snapshot(track, frame, deps),
        })
      await left(gone)
    },
    // Every object.entered gets its object.left, also when the task stops.
    onStop: left,
  }
}
