import type { Config } from '../../../shared/config.ts'
import type { EventsService } from '../../../shared/events/types.ts'
import { keepRenderedPicture } from '../../tasks/full-picture.ts'
import type { Frame } from '../../cameras/reader.ts'
import { inFramePixels } from '../analysis-size.ts'
import type { Snapshots, SnapshotInfo } from '../snapshots.ts'
import type { Track } from '../tracker.ts'
import { trackNow } from '../event-writes.ts'
import type { StreamObserverFactory } from './types.ts'

export interface ObjectEventDeps {
  config: Config
  events: EventsService
  snapshots: Pick<Snapshots, 'take'>
}

/**
 * The snapshot of an entering object (docs/cameras-and-stream-tasks.md "Snapshots"): the
 * camera's first frame at its own size at or after the analysed one (else the analysed frame) with the
 * box drawn at that size (the box is in the camera's pixels), kept and served by URL.
 */
async function snapshot(cameraId: string, track: Track, frame: Frame, deps: ObjectEventDeps): Promise<{ snapshotUrl: string } & SnapshotInfo> {
  const { jpeg, info } = await deps.snapshots.take(cameraId, frame, (picture) => ({ boxes: [{ box: inFramePixels(track.box, picture), colour: '#00ff00' }] }))
  return { snapshotUrl: (await keepRenderedPicture(jpeg, deps.config)).url, ...info }
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
    async onAnalysis({ frame, entered, left: gone, later }) {
      for (const track of entered.map(trackNow))
        await later(async () => deps.events.emit('object.entered', {
          taskId: row.taskId, cameraId: row.cameraId, objectId: track.id, label: track.label, confidence: track.confidence, box: track.box,
          ...await snapshot(row.cameraId, track, frame, deps),
        }))
      if (gone.length > 0) {
        const ended = gone.map(trackNow)
        await later(() => left(ended))
      }
    },
    // Every object.entered gets its object.left, also when the task stops.
    onStop: left,
  }
}
