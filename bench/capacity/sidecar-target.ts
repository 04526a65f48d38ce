import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { defaultManifestDir, loadManifests } from '../../models/load-manifests.ts'
import { startInference } from '../../runtime/inference/start.ts'
import type { TaskName } from '../case/constants.ts'
import type { Config } from '../../shared/config.ts'
import { cycleFrames, DEFAULT_FRAME_DIR, DEFAULT_FRAME_PATTERN, loadFrames, type RgbFrame } from './image-frames.ts'
import { SetupBlockedError, type CapacityTarget } from './run.ts'
import { setupBlockOf } from './setup-errors.ts'

/**
 * The capacity target over the device's inference sidecar: one supervised sidecar process
 * started as the runtime starts it (own temporary DATA_DIR), one pipeline handle per
 * (task, channel) — handles of one algorithm share its pipeline and model session, as the
 * device's tasks do — and camera frames sent as raw RGB through the sidecar's frame path
 * (`detect` with `image.kind = 'rgb'`, no overlay, a deadline).
 *
 * Handles are loaded before a step's hold starts (model loading is not measured) and kept
 * for the following steps; `close()` stops the sidecar. Detector latency is the time the
 * sidecar reports for the pipeline's detector node(s) (`timings['node.<id>']`).
 */
export interface SidecarTargetOptions {
  projectRoot: string
  config: Pick<Config, 'inferenceThreads' | 'maxEncodedImageBytes' | 'maxImagePixels' | 'modelsManifestDir'>
  algorithms: Record<TaskName, string>
  frameDir: string | null
  /** Per-frame deadline in the sidecar; a frame past it fails (counts as missing). */
  frameDeadlineMs: number
}

export async function createSidecarTarget(o: SidecarTargetOptions): Promise<CapacityTarget<RgbFrame> & { close(): Promise<void> }> {
  const frames = o.frameDir
    ? await loadFrames(path.resolve(o.frameDir))
    : await loadFrames(path.join(o.projectRoot, DEFAULT_FRAME_DIR), undefined, DEFAULT_FRAME_PATTERN)
  const manifestDir = o.config.modelsManifestDir || defaultManifestDir(o.projectRoot)
  const detectorNodes = new Map([...loadManifests(manifestDir, o.projectRoot).values()].map(({ manifest }) =>
    [manifest.algorithmId, manifest.nodes.filter((n) => n.action === 'detector').map((n) => `node.${n.id}`)]))
  // Unix socket paths are short (108 bytes): keep the folder near the root of tmp.
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cap-'))
  const running = await startInference({
    config: { dataPath: dataDir, inferenceThreads: o.config.inferenceThreads, maxEncodedImageBytes: o.config.maxEncodedImageBytes, maxImagePixels: o.config.maxImagePixels },
    projectRoot: o.projectRoot,
    manifestDir,
  }).catch(async (err) => { await rm(dataDir, { recursive: true, force: true }); throw err })
  const { inference } = running
  const handle = (task: TaskName, channel: number) => `capacity-${task}-${channel}`

  const frameSource = cycleFrames(frames)
  return {
    frames: frameSource,
    async open(tasks, channels) {
      for (const task of tasks) {
        for (let channel = 0; channel < channels; channel++) {
          if (inference.has(handle(task, channel))) continue
          try {
            await inference.load(handle(task, channel), o.algorithms[task])
          } catch (err) {
            const block = setupBlockOf(err, `${task} (algorithm ${o.algorithms[task]}) on channel ${channel + 1} of ${channels}`)
            if (block) throw new SetupBlockedError(block)
            throw err
          }
        }
      }
      return {
        async analyze(task, channel, frame) {
          const outcome = await inference.detect({ handle: handle(task, channel), image: frame, overlay: false, deadline: Date.now() + o.frameDeadlineMs })
          const nodes = (detectorNodes.get(o.algorithms[task]) ?? []).filter((k) => k in outcome.timings)
          return { detectorLatencyMs: nodes.length === 0 ? null : nodes.reduce((sum, k) => sum + outcome.timings[k]!, 0) }
        },
        async close() { /* handles stay loaded for the next, larger step */ },
      }
    },
    async close() {
      await running.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}
