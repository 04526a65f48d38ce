import type { AlgorithmRegistry } from '../../../shared/algorithms/types.ts'
import type { EventsService } from '../../../shared/events/types.ts'
import { UNKNOWN_LABEL, type DescribedRegion, type ObjectRecognition, type Recognize } from '../../../shared/galleries/types.ts'
import type { Logger } from '../../../shared/handler.ts'
import type { ImageSource, TargetBox } from '../../../shared/inference/types.ts'
import type { TaskConfig } from '../../../shared/tasks/types.ts'
import type { Frame } from '../../cameras/reader.ts'
import type { Track } from '../tracker.ts'
import type { FrameAnalysis, StreamObserverFactory } from './types.ts'

export interface RecognitionDeps {
  events: EventsService
  log: Logger
  algorithms: Pick<AlgorithmRegistry, 'get'>
  /** The sidecar's face description (the same as gallery images go through). */
  describeFaces(algorithmId: string, image: ImageSource): Promise<DescribedRegion[]>
  /** The galleries' search (runtime/galleries: the vector index). */
  recognize: Recognize
  /** The algorithm whose recognizer describes faces (GALLERY_FACE_ALGORITHM). */
  faceAlgorithm: string
}

/** A view is recognized again only when it is this much better (face area × detector confidence) than the best one tried. */
const BETTER_VIEW = 1.5
/** Margin around the object's box in the crop, as a share of its size each side (the face detector needs context). */
const MARGIN = 0.5

const quality = (track: Track) => track.box.width * track.box.height * track.confidence

/** The object's box with a margin, in the frame's pixels (the box is in the camera's), cut out of the frame. */
function crop(frame: Frame, box: TargetBox): { image: ImageSource & { kind: 'rgb' }; left: number; top: number; scale: number } | null {
  const scale = frame.width / frame.source.width
  const left = Math.max(0, Math.floor((box.x - box.width * MARGIN) * scale))
  const top = Math.max(0, Math.floor((box.y - box.height * MARGIN) * scale))
  const width = Math.min(frame.width, Math.ceil((box.x + box.width * (1 + MARGIN)) * scale)) - left
  const height = Math.min(frame.height, Math.ceil((box.y + box.height * (1 + MARGIN)) * scale)) - top
  if (width < 2 || height < 2) return null
  const data = Buffer.alloc(width * height * 3)
  for (let row = 0; row < height; row++) {
    const start = ((top + row) * frame.width + left) * 3
    frame.rgb.copy(data, row * width * 3, start, start + width * 3)
  }
  return { image: { kind: 'rgb', width, height, data }, left, top, scale }
}

/**
 * Recognition in stream tasks (docs/cameras-and-stream-tasks.md "Stream tasks"), when `taskConfig.recognition` is set:
 * one recognition per tracked object — its face cut from the frame (the largest face in its box
 * with a margin), described by the sidecar and searched in the task's galleries — repeated when
 * a clearly better view arrives (larger box × detector confidence). Each new or changed answer
 * is an `object.recognized` event, and the answer is kept on the track (`track.recognition`)
 * for the observers after this one (alarm policies' recognition condition). Runs beside the
 * frame loop, one recognition at a time per task, so the detector does not wait for it.
 */
export const recognition = (deps: RecognitionDeps): StreamObserverFactory => (row) => {
  const config = (row.taskConfig as TaskConfig).recognition
  if (!config) return {}
  const recognizer = deps.algorithms.get(deps.faceAlgorithm)?.manifest.nodes.find((node) => node.action === 'recognizer')
  const threshold = config.threshold ?? (recognizer && 'scoreThreshold' in recognizer ? recognizer.scoreThreshold : 1)
  /** object id → the quality of the best view tried. */
  const tried = new Map<string, number>()
  let running: Promise<void> | null = null

  const recognize = async (track: Track, frame: Frame, later: FrameAnalysis['later']) => {
    const cut = crop(frame, track.box)
    if (!cut) return
    const faces = await deps.describeFaces(deps.faceAlgorithm, cut.image)
    const face = faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0]
    if (!face) return
    const [match] = await deps.recognize({ kind: 'face', descriptors: [face.descriptor], galleryIds: config.galleryIds ?? [], model: face.model })
    const identity: ObjectRecognition = match && match.similarity >= threshold
      ? { name: match.name, personId: match.itemId, galleryId: match.galleryId, similarity: match.similarity }
      : { name: UNKNOWN_LABEL, personId: null, galleryId: null, similarity: match?.similarity ?? 0 }
    if (!tried.has(track.id)) return // the object left meanwhile
    const changed = !track.recognition || track.recognition.personId !== identity.personId
    track.recognition = identity
    if (!changed) return
    const faceBox = {
      x: Math.round(cut.left / cut.scale + face.box.x / cut.scale), y: Math.round(cut.top / cut.scale + face.box.y / cut.scale),
      width: Math.round(face.box.width / cut.scale), height: Math.round(face.box.height / cut.scale),
    }
    const recognized = { taskId: row.taskId, cameraId: row.cameraId, objectId: track.id, label: track.label, ...identity, faceBox }
    // After the object's object.entered, which may still wait for its snapshot.
    await later(async () => deps.events.emit('object.recognized', recognized))
  }

  return {
    async onAnalysis({ frame, tracks, left, later }) {
      for (const track of left) tried.delete(track.id)
      if (running) return
      // The object whose view improved most on the best one tried (never tried first).
      let best: { track: Track; gain: number } | null = null
      for (const track of tracks) {
        const before = tried.get(track.id)
        const gain = before ? quality(track) / before : Infinity
        if (gain >= BETTER_VIEW && (!best || gain > best.gain)) best = { track, gain }
      }
      if (!best) return
      const { track } = best
      tried.set(track.id, quality(track))
      running = recognize(track, frame, later)
        .catch((error: Error) => deps.log.warn({ taskId: row.taskId, objectId: track.id, err: error.message }, 'stream task recognition failed'))
        .finally(() => { running = null })
    },
    async onStop() {
      await running
      tried.clear()
    },
  }
}
