import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ffmpegBinary } from '../../runtime/cameras/ffmpeg.ts'
import type { TaskName } from '../case/constants.ts'
import type { StreamTaskStatus } from '../../shared/streams/types.ts'
import { freePort } from '../../test/helpers/device.ts'
import { startRtspServer, type RtspServer } from '../../test/helpers/rtsp-server.ts'
import { uploadFile } from '../../test/helpers/upload-file.ts'
import { startBenchDevice, type BenchDevice } from '../lib/device-process.ts'
import { deviceClient, type DeviceClient } from './device-client.ts'
import type { StepPlan } from './plan.ts'
import { startResourceSampler, type ResourceReport } from './resources.ts'
import { rotatedCopy } from './rotated.ts'
import { SetupBlockedError, type CapacityTarget, type StepOutcome } from './run.ts'
import { setupBlockOf } from './setup-errors.ts'
import { channelFigures, summarizeStreamStep, type ChannelFigures, type ChannelWindow } from './stream-measure.ts'
import { checkVisits, footageOf, type Footage, type VisitCheck } from './visits.ts'

/**
 * The capacity target on real streams (spec 2.8): the built device (its own DATA_DIR) over
 * HTTP, and the footage served by GStreamer's RTSP server on loopback, one mount per channel,
 * each channel a camera of its own (`Camera/add`, rtsp). Every RTSP client gets a pipeline of
 * its own (rtsp-server.py says why); channel c plays the footage from a different point
 * (golden-ratio spacing, rotated.ts), so channels see people at different times, as cameras do.
 *
 * A step of n channels creates n stream tasks per workload task (`TaskCreate`), waits until
 * they deliver frames, lets them warm up, then reads every task's counters (`Task/page`) at
 * the start and at the end of the hold while sampling the device's processes (resources.ts),
 * reads each channel's `object.entered` events of the hold (`Event/EventPage`), and cancels
 * the tasks (`TaskCancle`). Cameras stay for the next, larger step.
 */

export interface StreamTargetOptions {
  video: string
  maxChannels: number
  motionGating: boolean
  /** `taskConfig.detectorInputSize` of every task; null or absent: the algorithm's own. */
  detectorInputSize?: number | null
  warmupSeconds: number
  /** Algorithm id per task (spec 2.3: ids differ by deployment). */
  algorithms: Record<TaskName, string>
  /** An ONNX helmet classifier to install as `helmet-classifier` before the run; null: none. */
  helmetClassifier: string | null
  /** Settings of the device (environment, shared/config.ts), e.g. `STREAM_DETECT_SLOTS`. */
  deviceEnv?: Record<string, string>
}

/** One channel of a step: what the device said about its task and what the channel saw. */
export type ChannelEvidence = {
  taskId: string
  task: TaskName
  channel: number
  cameraId: string
  mount: Mount
  figures: ChannelFigures
  after: Pick<StreamTaskStatus, 'state' | 'stateReason' | 'inputFps' | 'processedFps' | 'detectorLatencyP50Ms' | 'detectorLatencyP99Ms' | 'criticalPathLatencyP99Ms' | 'eventWriteP99Ms' | 'lastError'>
  /** `object.entered` events of the hold (Event/EventPage). */
  objectEntered: number
  objectEnteredAt: string[]
  /** The RTSP pipeline the task's reader played. */
  playback: { startedAt: string; offsetSeconds: number; loopsAt: string[] } | null
  /** The footage's visits this channel saw whole in the hold and found; null when the footage is not known (visits.ts). */
  visits: VisitCheck | null
}

/** What a step on real streams writes to the summary (`steps[].evidence`). */
export type StreamStepEvidence = {
  window: { start: string; end: string; seconds: number }
  /** From the first TaskCreate until every task delivered frames. */
  startWaitMs: number
  resources: ResourceReport
  /** % of one core per channel spent in ffmpeg (the task's reader and the camera's own). */
  decodeCpuPerChannelPercent: number
  /** The device's peak RSS above idle (before any camera or pipeline), per channel. */
  rssPerChannelMb: number
  channels: ChannelEvidence[]
}

export interface StreamTarget extends CapacityTarget {
  /** How the target was set up, for the run's summary. */
  settings: Record<string, unknown>
  close(): Promise<void>
}

interface Mount { path: string; offsetSeconds: number }
interface ChannelTask { taskId: string; task: TaskName; targetFps: number; channel: number }

/** How long a step's tasks may take to deliver their first frames before the hold starts anyway. */
const START_TIMEOUT_MS = 120_000
/** Where channel c's stream starts in the footage, whole seconds (keyframes): spread over it for any number of channels. */
const offsetOf = (channel: number, loopSeconds: number) => Math.floor(((channel * 0.6180339887) % 1) * loopSeconds)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const iso = (ms: number) => new Date(ms).toISOString()
const counters = (s: StreamTaskStatus): ChannelWindow['before'] =>
  ({ framesIn: s.framesIn, framesDropped: s.framesDropped, framesProcessed: s.framesProcessed, framesFailed: s.framesFailed, motionSkipped: s.motionSkipped })

export async function openStreamTarget(o: StreamTargetOptions): Promise<StreamTarget> {
  const video = path.resolve(o.video)
  const footage = footageOf(video)
  const copies = await mkdtemp(path.join(os.tmpdir(), 'cap-footage-'))
  const mounts: Mount[] = Array.from({ length: o.maxChannels }, (_, c) => ({ path: `/ch${c + 1}`, offsetSeconds: footage ? offsetOf(c, footage.loopSeconds) : 0 }))
  const started: { rtsp?: RtspServer; device?: BenchDevice } = {}
  const close = async () => {
    await started.device?.stop()
    await started.rtsp?.stop()
    await rm(copies, { recursive: true, force: true })
  }
  try {
    const files = await Promise.all(mounts.map(async (m) => {
      if (m.offsetSeconds === 0) return video
      const file = path.join(copies, `${m.path.slice(1)}.mp4`)
      await rotatedCopy(ffmpegBinary(process.env.FFMPEG_PATH ?? ''), video, m.offsetSeconds, file)
      return file
    }))
    const rtsp = started.rtsp = await startRtspServer(video, await freePort(), mounts.map((m, c) => ({ path: m.path, file: files[c] })), undefined, { shared: false })
    const device = started.device = await startBenchDevice(o.deviceEnv)
    const mtk = await device.signIn()
    const client = deviceClient(device.url, mtk)
    if (o.helmetClassifier) {
      const uploadId = await uploadFile(device, mtk, await readFile(o.helmetClassifier), path.basename(o.helmetClassifier), 'model')
      await client.post('/gtw/cwai/atomic/Model/upload', { uploadId, modelId: 'helmet-classifier', modelName: 'Helmet classifier (operator-supplied)' })
    }
    const idle = startResourceSampler(device.pid).stop()
    const cameras: string[] = []
    const serverState = () => rtsp.process.exitCode === null && rtsp.process.signalCode === null ? 'RTSP server running' : `RTSP server exited (${rtsp.process.exitCode ?? rtsp.process.signalCode})`

    const runStep = async (plan: StepPlan): Promise<StepOutcome> => {
      while (cameras.length < plan.channels) cameras.push(await client.addRtspCamera(`capacity-${cameras.length + 1}`, rtsp.urls[cameras.length]!, serverState))
      const tasks: ChannelTask[] = plan.tasks.flatMap((t) => Array.from({ length: plan.channels }, (_, channel) => ({
        taskId: `${t.name}-${plan.channels}ch-${channel + 1}`, task: t.name, targetFps: t.targetFps, channel,
      })))
      const created: string[] = []
      const createdAt = Date.now()
      try {
        for (const t of tasks) {
          await createTask(client, t, { algorithmCode: o.algorithms[t.task], cameraId: cameras[t.channel]!, motionGating: o.motionGating, ...(o.detectorInputSize ? { taskConfig: { detectorInputSize: o.detectorInputSize } } : {}) }, plan.channels)
          created.push(t.taskId)
        }
        const startWaitMs = await untilRunning(client, tasks)
        await sleep(o.warmupSeconds * 1000)

        const before = await client.statuses()
        const start = Date.now()
        const sampler = startResourceSampler(device.pid)
        await sleep(plan.holdSeconds * 1000)
        const after = await client.statuses()
        const end = Date.now()
        const resources = sampler.stop()
        const seconds = (end - start) / 1000
        const entered = await client.enteredTimes(created, start, end)

        const windows: ChannelWindow[] = tasks.map((t) => {
          const b = before.get(t.taskId)
          const a = after.get(t.taskId)
          if (!b || !a) throw new Error(`task ${t.taskId} disappeared during the step`)
          return { task: t.task, channel: t.channel, before: counters(b), after: { ...counters(a), detectorLatencyP99Ms: a.detectorLatencyP99Ms, criticalPathLatencyP99Ms: a.criticalPathLatencyP99Ms } }
        })
        const evidence: StreamStepEvidence = {
          window: { start: iso(start), end: iso(end), seconds },
          startWaitMs,
          resources,
          decodeCpuPerChannelPercent: (resources.roles.ffmpeg.cpuCores / plan.channels) * 100,
          rssPerChannelMb: (resources.rssPeakMb - idle.rssPeakMb) / plan.channels,
          channels: tasks.map((t, i) => {
            // The task's reader's pipeline: the first one of its mount since the step's tasks were created.
            const media = rtsp.media.find((m) => m.mount === mounts[t.channel]!.path && m.startedAt >= createdAt)
            return channelEvidence({
              t, cameraId: cameras[t.channel]!, mount: mounts[t.channel]!, window: windows[i]!, status: after.get(t.taskId)!, seconds,
              entered: entered.get(t.taskId) ?? [], playback: media ? { ...media, offsetSeconds: mounts[t.channel]!.offsetSeconds } : null, footage, hold: { start, end },
            })
          }),
        }
        return { measurement: summarizeStreamStep(plan, windows, seconds, resources.peaks), evidence }
      } finally {
        for (const taskId of created) await client.post('/v1/cwai/aihost/TaskCancle', { taskId })
      }
    }

    return {
      runStep,
      settings: {
        video: path.basename(o.video), motionGating: o.motionGating, detectorInputSize: o.detectorInputSize ?? null, warmupSeconds: o.warmupSeconds, algorithms: o.algorithms,
        helmetClassifier: o.helmetClassifier ? path.basename(o.helmetClassifier) : null, footage, idleRssMb: idle.rssPeakMb, deviceEnv: o.deviceEnv ?? {},
        cameras: 'one RTSP mount per channel (GStreamer RTSP server on loopback, H.264 passed through, a pipeline per client), one camera per mount',
        streamOffsetsSeconds: mounts.map((m) => m.offsetSeconds),
      },
      close,
    }
  } catch (err) {
    await close()
    throw err
  }
}

/** TaskCreate; an answer that stands for a setup block (setup-errors.ts) throws SetupBlockedError. */
async function createTask(client: DeviceClient, t: ChannelTask, settings: { algorithmCode: string; cameraId: string; motionGating: boolean; taskConfig?: { detectorInputSize: number } }, channels: number): Promise<void> {
  const answer = await client.call('/v1/cwai/aihost/TaskCreate', { taskId: t.taskId, targetFps: t.targetFps, ...settings })
  if (answer.resCode === 1) return
  const block = answer.resMsg[0] && setupBlockOf(answer.resMsg[0], `${t.task} (algorithm ${settings.algorithmCode}) on channel ${t.channel + 1} of ${channels}`)
  if (block) throw new SetupBlockedError(block)
  throw new Error(`TaskCreate ${t.taskId}: ${JSON.stringify(answer.resMsg)}`)
}

/** Waits until every task runs and has frames (or the start timeout passed: a task still silent then scores 0 fps); returns the wait. */
async function untilRunning(client: DeviceClient, tasks: ChannelTask[]): Promise<number> {
  const waitStart = Date.now()
  while (Date.now() - waitStart < START_TIMEOUT_MS) {
    const now = await client.statuses()
    if (tasks.every((t) => now.get(t.taskId)?.state === 'running' && now.get(t.taskId)!.framesIn > 0)) break
    await sleep(500)
  }
  return Date.now() - waitStart
}

function channelEvidence(e: {
  t: ChannelTask; cameraId: string; mount: Mount; window: ChannelWindow; status: StreamTaskStatus; seconds: number
  entered: number[]; playback: { startedAt: number; offsetSeconds: number; loops: number[] } | null; footage: Footage | null; hold: { start: number; end: number }
}): ChannelEvidence {
  const a = e.status
  return {
    taskId: e.t.taskId, task: e.t.task, channel: e.t.channel, cameraId: e.cameraId, mount: e.mount,
    figures: channelFigures(e.window, e.t.targetFps, e.seconds),
    after: {
      state: a.state, stateReason: a.stateReason, inputFps: a.inputFps, processedFps: a.processedFps,
      detectorLatencyP50Ms: a.detectorLatencyP50Ms, detectorLatencyP99Ms: a.detectorLatencyP99Ms, criticalPathLatencyP99Ms: a.criticalPathLatencyP99Ms, eventWriteP99Ms: a.eventWriteP99Ms, lastError: a.lastError,
    },
    objectEntered: e.entered.length,
    objectEnteredAt: [...e.entered].sort((x, y) => x - y).map(iso),
    playback: e.playback && { startedAt: iso(e.playback.startedAt), offsetSeconds: e.playback.offsetSeconds, loopsAt: e.playback.loops.map(iso) },
    visits: e.footage && e.playback ? checkVisits(e.footage, e.playback, e.hold, e.entered) : null,
  }
}
