import { randomUUID } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { CLIP_LIMITS, type PolicyAction } from '../../shared/alarms/types.ts'
import type { Db } from '../db/client.ts'
import { events } from '../../shared/db/schema/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Logger } from '../../shared/handler.ts'
import { DEFAULT_AREA } from '../../shared/inference/types.ts'
import type { ClipRecorder } from '../../shared/recording/clip-recorder.ts'
import type { Frame } from '../cameras/reader.ts'
import { inFramePixels } from '../streams/analysis-size.ts'
import { toDeviceEvent } from '../events/outbox.ts'
import type { SnapshotInfo, SnapshotMarks, Snapshots } from '../streams/snapshots.ts'
import type { Track } from '../streams/tracker.ts'
import type { AlarmActions } from './actions.ts'
import type { AlarmPictures } from './pictures.ts'

/** What an alarm is about: a policy's conditions met (or a logic node's hit) on a task's frame. */
export interface AlarmRequest {
  alarmType: 'policy' | 'logic'
  policy: { policyId: string; policyName: string; actions: readonly PolicyAction[] } | null
  taskId: string
  cameraId: string
  frame: Frame
  objects: readonly Track[]
  dwellMs: number | null
}

export interface AlarmRaiserDeps {
  db: Db
  log: Logger
  events: Pick<EventsService, 'emit'>
  /** The alarm's snapshot: at the camera's own size where it can (docs/cameras-and-stream-tasks.md "Snapshots"). */
  snapshots: Pick<Snapshots, 'take'>
  pictures: AlarmPictures
  actions: AlarmActions
  /** `ctx.recording` when it records clips for alarms (shared/recording/clip-recorder.ts). */
  recorder(): ClipRecorder | null
}

/** The alarm's objects boxed in red and labelled on the snapshot's picture (boxes are in the camera's pixels, the picture may be smaller). */
const overlay = (picture: Frame, objects: readonly Track[]): SnapshotMarks => {
  const boxes = objects.map(({ box, label }) => ({ label, box: inFramePixels(box, picture) }))
  return {
    boxes: boxes.map(({ box }) => ({ box, colour: '#ff2020' })),
    labels: boxes.map(({ box, label }) => ({ text: label, x: box.x + 4, y: box.y - 4, colour: '#ff2020' })),
  }
}

/** The snapshot fields of an alarm without a kept snapshot. */
const NO_SNAPSHOT: { [K in keyof SnapshotInfo]: null } = { snapshotWidth: null, snapshotHeight: null, snapshotFullResolution: null, snapshotSkewMs: null, snapshotFallback: null }

/**
 * Raises one alarm: its snapshot kept with the events, the policy's clip asked of the recorder,
 * the `alarm.raised` event written, then the policy's other actions sent in the background.
 * A snapshot that cannot be written (a full disk) leaves the alarm without one; the alarm stands.
 */
export class AlarmRaiser {
  constructor(private readonly deps: AlarmRaiserDeps) {}

  async raise(request: AlarmRequest): Promise<number> {
    const { policy, frame, objects } = request
    const alarmId = randomUUID()
    const first = objects[0]
    const kept = await this.deps.snapshots.take(request.cameraId, frame, (picture) => overlay(picture, objects))
      .then(async ({ jpeg, info }) => ({ snapshotUrl: await this.deps.pictures.save(alarmId, jpeg), info }))
      .catch((error: Error) => { this.deps.log.warn({ alarmId, err: error.message }, 'alarm snapshot not kept'); return null })
    const snapshotUrl = kept?.snapshotUrl ?? null
    const { clipUrl, clipError } = await this.#clip(request, alarmId)
    const label = first?.label ?? null
    // The person the task's recognition named (or "unknown"), when it saw the object's face.
    const seen = first?.recognition ?? null
    const who = seen ? ` ${seen.name}` : ''
    // The default area is the whole frame: not worth naming.
    const where = first?.areaId && first.areaId !== DEFAULT_AREA.areaId ? ` in ${first.areaId}` : ''
    const message = policy
      ? `${policy.policyName}: ${objects.length > 1 ? `${objects.length} × ${label}` : `${label}${who}`}${where}${request.dwellMs ? ` for ${Math.round(request.dwellMs / 1000)} s` : ''}`
      : `logic node hit: ${label}${who}${where}`
    const id = await this.deps.events.emit('alarm.raised', {
      alarmId, taskId: request.taskId, cameraId: request.cameraId, alarmType: request.alarmType, message,
      policyId: policy?.policyId ?? null, policyName: policy?.policyName ?? null,
      objectId: objects.length === 1 ? first!.id : null, objectIds: objects.map((o) => o.id), label, areaId: first?.areaId ?? null,
      count: objects.length, dwellMs: request.dwellMs, box: first?.box ?? null,
      personId: seen?.personId ?? null, name: seen?.name ?? null, galleryId: seen?.galleryId ?? null, similarity: seen?.similarity ?? null,
      snapshotUrl, imageUrl: snapshotUrl, clipUrl, ...(kept?.info ?? NO_SNAPSHOT),
    })
    if (!policy) return id
    const [row] = await this.deps.db.select().from(events).where(eq(events.id, id))
    const event = toDeviceEvent(row!)
    if (clipError) void this.deps.actions.failed(event, policy.policyId, 'clip', request.cameraId, 1, clipError)
    this.deps.actions.dispatch(event, policy.actions, policy.policyId)
    return id
  }

  /** The policy's clip, asked of the recorder: the URL it will be served at, or why there is none. */
  async #clip(request: AlarmRequest, alarmId: string): Promise<{ clipUrl: string | null; clipError: string | null }> {
    const clip = request.policy?.actions.find((a) => a.type === 'clip')
    if (!clip) return { clipUrl: null, clipError: null }
    const recorder = this.deps.recorder()
    if (!recorder) return { clipUrl: null, clipError: 'the device records no clips' }
    const preRollS = clip.preRollS ?? CLIP_LIMITS.defaultPreRollS, postRollS = clip.postRollS ?? CLIP_LIMITS.defaultPostRollS
    const objectId = request.objects.length === 1 ? request.objects[0]!.id : null
    return recorder.recordEvent({ cameraId: request.cameraId, eventId: alarmId, preRollS, postRollS, at: request.frame.time, taskId: request.taskId, objectId })
      .then((r) => ({ clipUrl: r.clipUrl, clipError: null }), (error: Error) => ({ clipUrl: null, clipError: error.message }))
  }
}
