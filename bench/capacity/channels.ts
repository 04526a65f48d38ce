import type { TaskName } from '../case/constants.ts'
import type { FrameRecord } from './frames.ts'
import type { TaskPlan } from './measure.ts'

/**
 * Simulated camera channels (spec 2.8). For every task of the step, each channel offers
 * frames at the task's targetFps to the frame path, through a bounded queue of its own: one
 * frame in flight per channel, at most `queueDepth` waiting; a frame that finds the queue
 * full is discarded and counted. Offer times are fixed in advance (channel c of n starts
 * c/n of a frame interval late, so channels do not fire in bursts), so the number of frames
 * a step offers does not depend on timer jitter.
 *
 * When the hold ends no frame is offered any more; what is queued or in flight may finish
 * for up to `drainTimeoutMs` (it counts as processed, with its real latency); what is still
 * unfinished then stays `pending` (missing).
 */

export interface FramePath<F> {
  /** Runs one frame through the task's pipeline; resolves with the detector's own time. */
  analyze(task: TaskName, channel: number, frame: F): Promise<{ detectorLatencyMs: number | null }>
}

export interface ChannelRunPlan {
  channels: number
  holdSeconds: number
  tasks: TaskPlan[]
  queueDepth: number
  drainTimeoutMs: number
}

/** Frame k of a channel of a task: any object the frame path understands. */
export type FrameSource<F> = (task: TaskName, channel: number, k: number) => F

export function offerTimesMs(targetFps: number, channel: number, channels: number, holdSeconds: number): number[] {
  const interval = 1000 / targetFps
  const offset = (channel / channels) * interval
  const times: number[] = []
  for (let k = 0; offset + k * interval < holdSeconds * 1000; k++) times.push(offset + k * interval)
  return times
}

export async function runChannels<F>(path: FramePath<F>, plan: ChannelRunPlan, frameSource: FrameSource<F>, now: () => number = () => performance.now()): Promise<FrameRecord[]> {
  const t0 = now()
  const records: FrameRecord[] = []
  const timers: NodeJS.Timeout[] = []
  const lanes: Array<{ idle: () => boolean }> = []
  let wake: (() => void) | null = null

  for (const task of plan.tasks) {
    for (let channel = 0; channel < plan.channels; channel++) {
      const queue: Array<{ record: FrameRecord; frame: F }> = []
      let busy = false
      const pump = () => {
        if (busy || queue.length === 0) return
        busy = true
        const { record, frame } = queue.shift()!
        path.analyze(task.name, channel, frame).then(
          (r) => { record.fate = 'processed'; record.detectorLatencyMs = r.detectorLatencyMs },
          () => { record.fate = 'failed' },
        ).finally(() => {
          record.completedAtMs = now() - t0
          busy = false
          pump()
          wake?.()
        })
      }
      lanes.push({ idle: () => !busy && queue.length === 0 })
      offerTimesMs(task.targetFps, channel, plan.channels, plan.holdSeconds).forEach((at, k) => {
        timers.push(setTimeout(() => {
          const record: FrameRecord = { task: task.name, channel, offeredAtMs: now() - t0, fate: 'pending', completedAtMs: null, detectorLatencyMs: null }
          records.push(record)
          if (queue.length >= plan.queueDepth && busy) {
            record.fate = 'discarded'
            return
          }
          queue.push({ record, frame: frameSource(task.name, channel, k) })
          pump()
        }, Math.max(0, at - (now() - t0))))
      })
    }
  }

  await new Promise((resolve) => setTimeout(resolve, plan.holdSeconds * 1000 - (now() - t0)))
  // Every offer timer is due by now; let the late ones fire before draining.
  await new Promise((resolve) => setImmediate(resolve))
  const drainDeadline = now() + plan.drainTimeoutMs
  while (!lanes.every((l) => l.idle()) && now() < drainDeadline) {
    await new Promise<void>((resolve) => {
      wake = resolve
      setTimeout(resolve, Math.max(1, drainDeadline - now())).unref()
    })
    wake = null
  }
  for (const t of timers) clearTimeout(t)
  // A snapshot: frames still in flight keep `pending` even if they settle later.
  return records.map((r) => ({ ...r }))
}
