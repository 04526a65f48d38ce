import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ffmpegBinary } from '../../runtime/cameras/ffmpeg.ts'
import type { TaskName } from '../case/constants.ts'
import type { MessageItem } from '../../shared/errors/index.ts'
import type { StreamTaskStatus } from '../../shared/streams/types.ts'
import { freePort } from '../../test/helpers/device.ts'
import { startRtspServer, type RtspServer } from '../../test/helpers/rtsp-server.ts'
import { uploadFile } from '../../test/helpers/upload-file.ts'
import { startBenchDevice, type BenchDevice } from '../lib/device-process.ts'
import type { StepPlan } from './plan.ts'
import { startResourceSampler, type ResourceReport } from './resources.ts'
import { rotatedCopy } from './rotated.ts'
import { SetupBlockedError, type CapacityTarget, type StepOutcome } from './run.ts'
import { setupBlockOf } from './setup-errors.ts'
import { channelFigures, summarizeStreamStep, type ChannelFigures, type ChannelWindow } from './stream-measure.ts'
import { checkVisits, footageOf, type VisitCheck } from './visits.ts'

/**
 * The capacity target on real streams (spec 2.8): the built device (its own DATA_DIR) over
 * HTTP, and the footage served by GStreamer's RTSP server on loopback, one mount per channel,
 * each channel a camera of its own (`Camera/add`, rtsp). Every RTSP client gets a pipeline of
 * its own (rtsp-server.py says why); channel c plays the footage from a different point
 * (golden-ratio spacing, rotated.ts), so channels see people at different times, as cameras do. A step of n channels creates n
 * stream tasks per workload task (`TaskCreate`), waits until they run, lets them warm up,
 * then reads every task's counters (`Task/page`) at the start and at the end of the hold while
 * sampling the device's processes (resources.ts), counts each channel's `object.entered`
 * events of the hold (`Event/EventPage`), and cancels the tasks (`TaskCancle`). Cameras stay
 * for the next, larger step.
 */

export interface StreamTargetOptions {
  video: string
  maxChannels: number
  motionGating: boolean
  warmupSeconds: number
  /** Algorithm id per task (spec 2.3: ids differ by deployment). */
  algorithms: Record<TaskName, string>
  /** An ONNX helmet classifier to install as `helmet-classifier` before the run; null: none. */
  helmetClassifier: string | null
  log(line: string): void
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
  channels: {
    taskId: string
    task: TaskName
    channel: number
    cameraId: string
    mount: { path: string; offsetSeconds: number }
    figures: ChannelFigures
    after: Pick<StreamTaskStatus, 'state' | 'stateReason' | 'inputFps' | 'processedFps' | 'detectorLatencyP50Ms' | 'detectorLatencyP99Ms' | 'criticalPathLatencyP99Ms' | 'lastError'>
    /** `object.entered` events of the hold (Event/EventPage). */
    objectEntered: number
    objectEnteredAt: string[]
    /** The RTSP pipeline the task's reader played. */
    playback: { startedAt: string; offsetSeconds: number; loopsAt: string[] } | null
    /** The footage's visits this channel saw whole in the hold and found; null when the footage is not known (visits.ts). */
    visits: VisitCheck | null
  }[]
}

export interface StreamTarget extends CapacityTarget {
  /** How the target was set up, for the run's summary. */
  settings: Record<string, unknown>
  close(): Promise<void>
}

/** How long a step's tasks may take to deliver their first frames before the hold starts anyway. */
const START_TIMEOUT_MS = 120_000
/** Where channel c's stream starts in the footage, whole seconds (keyframes): spread over it for any number of channels. */
const offsetOf = (channel: number, loopSeconds: number) => Math.floor(((channel * 0.6180339887) % 1) * loopSeconds)

type Answer = { resCode: number; resData?: any; resMsg: MessageItem[] }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const pick = (s: StreamTaskStatus): ChannelWindow['before'] => ({ framesIn: s.framesIn, framesDropped: s.framesDropped, framesProcessed: s.framesProcessed, framesFailed: s.framesFailed, motionSkipped: s.motionSkipped })

export async function openStreamTarget(o: StreamTargetOptions): Promise<StreamTarget> {
  const video = path.resolve(o.video)
  const footage = footageOf(video)
  const copies = await mkdtemp(path.join(os.tmpdir(), 'cap-footage-'))
  const mounts = Array.from({ length: o.maxChannels }, (_, c) => ({ path: `/ch${c + 1}`, offsetSeconds: footage ? offsetOf(c, footage.loopSeconds) : 0 }))
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
    const device = started.device = await startBenchDevice()
    const mtk = await device.signIn()
    const call = async (route: string, body: unknown): Promise<Answer> => {
      const response = await fetch(device.url + route, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body: JSON.stringify(body) })
      return await response.json() as Answer
    }
    const post = async (route: string, body: unknown) => {
      const answer = await call(route, body)
      if (answer.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(answer.resMsg)}`)
      return answer.resData
    }
    if (o.helmetClassifier) {
      const uploadId = await uploadFile(device, mtk, await readFile(o.helmetClassifier), path.basename(o.helmetClassifier), 'model')
      await post('/gtw/cwai/atomic/Model/upload', { uploadId, modelId: 'helmet-classifier', modelName: 'Helmet classifier (operator-supplied)' })
    }
    const idle = startResourceSampler(device.pid).stop()
    const cameras: string[] = []

    const addCamera = async (c: number) => {
      const body = { cameraName: `capacity-${c + 1}`, sourceType: 'rtsp', url: rtsp.urls[c] }
      // A just-started RTSP mount may answer its first session with an error; the device says when to retry.
      for (let attempt = 1; ; attempt++) {
        const answer = await call('/gtw/cwai/Camera/add', body)
        if (answer.resCode === 1) return answer.resData.cameraId as string
        const item = answer.resMsg[0]
        if (!item?.retryable || attempt >= 5) {
          const server = rtsp.process.exitCode === null && rtsp.process.signalCode === null ? 'running' : `exited (${rtsp.process.exitCode ?? rtsp.process.signalCode})`
          throw new Error(`Camera/add ${rtsp.urls[c]} (RTSP server ${server}): ${JSON.stringify(answer.resMsg)}`)
        }
        await sleep(1000 * (item.retryAfterSeconds ?? 1))
      }
    }
    const statuses = async (): Promise<Map<string, StreamTaskStatus>> => {
      const page = await post('/gtw/cwai/Task/page', { pageNum: 1, pageSize: 500 })
      return new Map((page.rows as StreamTaskStatus[]).map((s) => [s.taskId, s]))
    }
    const enteredTimes = async (taskIds: Set<string>, start: number, end: number): Promise<Map<string, number[]>> => {
      const times = new Map([...taskIds].map((id) => [id, [] as number[]]))
      for (let pageNum = 1; ; pageNum++) {
        const page = await post('/gtw/cwai/Event/EventPage', {
          pageNum, pageSize: 500, kinds: ['object.entered'], startTime: new Date(start).toISOString(), endTime: new Date(end + 1).toISOString(),
        })
        for (const row of page.rows) times.get(row.payload.taskId)?.push(Date.parse(row.time))
        if (page.rows.length < 500) return times
      }
    }

    const runStep = async (plan: StepPlan): Promise<StepOutcome> => {
      while (cameras.length < plan.channels) cameras.push(await addCamera(cameras.length))
      const tasks = plan.tasks.flatMap((t) => Array.from({ length: plan.channels }, (_, channel) => ({
        taskId: `${t.name}-${plan.channels}ch-${channel + 1}`, task: t.name, targetFps: t.targetFps, channel,
      })))
      const created: string[] = []
      const createdAt = Date.now()
      try {
        for (const t of tasks) {
          const answer = await call('/v1/cwai/aihost/TaskCreate', {
            taskId: t.taskId, algorithmCode: o.algorithms[t.task], cameraId: cameras[t.channel], targetFps: t.targetFps, motionGating: o.motionGating,
          })
          if (answer.resCode !== 1) {
            const block = answer.resMsg[0] && setupBlockOf(answer.resMsg[0], `${t.task} (algorithm ${o.algorithms[t.task]}) on channel ${t.channel + 1} of ${plan.channels}`)
            if (block) throw new SetupBlockedError(block)
            throw new Error(`TaskCreate ${t.taskId}: ${JSON.stringify(answer.resMsg)}`)
          }
          created.push(t.taskId)
        }
        // Hold only once every task runs (or the start timeout passed: a task still silent then scores 0 fps).
        const waitStart = Date.now()
        while (Date.now() - waitStart < START_TIMEOUT_MS) {
          const now = await statuses()
          if (tasks.every((t) => now.get(t.taskId)?.state === 'running' && now.get(t.taskId)!.framesIn > 0)) break
          await sleep(500)
        }
        const startWaitMs = Date.now() - waitStart
        await sleep(o.warmupSeconds * 1000)

        const before = await statuses()
        const start = Date.now()
        const sampler = startResourceSampler(device.pid)
        await sleep(plan.holdSeconds * 1000)
        const after = await statuses()
        const end = Date.now()
        const resources = sampler.stop()
        const seconds = (end - start) / 1000
        const entered = await enteredTimes(new Set(created), start, end)

        const windows: ChannelWindow[] = tasks.map((t) => {
          const b = before.get(t.taskId)
          const a = after.get(t.taskId)
          if (!b || !a) throw new Error(`task ${t.taskId} disappeared during the step`)
          return { task: t.task, channel: t.channel, before: pick(b), after: { ...pick(a), detectorLatencyP99Ms: a.detectorLatencyP99Ms, criticalPathLatencyP99Ms: a.criticalPathLatencyP99Ms } }
        })
        const measurement = summarizeStreamStep(plan, windows, seconds, resources.peaks)
        const evidence: StreamStepEvidence = {
          window: { start: new Date(start).toISOString(), end: new Date(end).toISOString(), seconds },
          startWaitMs,
          resources,
          decodeCpuPerChannelPercent: (resources.roles.ffmpeg.cpuCores / plan.channels) * 100,
          rssPerChannelMb: (resources.rssPeakMb - idle.rssPeakMb) / plan.channels,
          channels: tasks.map((t, i) => {
            const a = after.get(t.taskId)!
            const times = entered.get(t.taskId) ?? []
            // The task's reader's pipeline: the first one of its mount since the step's tasks were created.
            const media = rtsp.media.find((m) => m.mount === mounts[t.channel]!.path && m.startedAt >= createdAt)
            const playback = media ? { ...media, offsetSeconds: mounts[t.channel]!.offsetSeconds } : null
            return {
              taskId: t.taskId, task: t.task, channel: t.channel, cameraId: cameras[t.channel]!, mount: mounts[t.channel]!,
              figures: channelFigures(windows[i]!, t.targetFps, seconds),
              after: {
                state: a.state, stateReason: a.stateReason, inputFps: a.inputFps, processedFps: a.processedFps,
                detectorLatencyP50Ms: a.detectorLatencyP50Ms, detectorLatencyP99Ms: a.detectorLatencyP99Ms,
                criticalPathLatencyP99Ms: a.criticalPathLatencyP99Ms, lastError: a.lastError,
              },
              objectEntered: times.length,
              objectEnteredAt: times.sort((x, y) => x - y).map((ms) => new Date(ms).toISOString()),
              playback: playback && { startedAt: new Date(playback.startedAt).toISOString(), offsetSeconds: playback.offsetSeconds, loopsAt: playback.loops.map((ms) => new Date(ms).toISOString()) },
              visits: footage && playback ? checkVisits(footage, playback, { start, end }, times) : null,
            }
          }),
        }
        return { measurement, evidence }
      } finally {
        for (const taskId of created) await post('/v1/cwai/aihost/TaskCancle', { taskId })
      }
    }

    return {
      runStep,
      settings: {
        video: path.basename(o.video), motionGating: o.motionGating, warmupSeconds: o.warmupSeconds, algorithms: o.algorithms,
        helmetClassifier: o.helmetClassifier ? path.basename(o.helmetClassifier) : null, footage, idleRssMb: idle.rssPeakMb,
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
