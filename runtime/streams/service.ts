import { asc, eq } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { streamTasks } from '../../shared/db/schema/index.ts'
import { ApiError, invalidParam, isApiError, RecommendedAction } from '../../shared/errors/index.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { InferenceService } from '../../shared/inference/types.ts'
import type { SchedulesService } from '../../shared/schedules/types.ts'
import { DEFAULT_TRACKED_DETECT_INTERVAL_MS, type StreamTasksService, type StreamTaskResult, type StreamTaskStatus, type TaskCreateInput, type TaskUpdateInput } from '../../shared/streams/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import type { AlgorithmRegistry } from '../../shared/algorithms/types.ts'
import type { CameraService } from '../cameras/service.ts'
import type { StreamTaskMetrics } from '../metrics/index.ts'
import { DetectScheduler } from './detect-scheduler.ts'
import { StreamTask, type StreamTaskRow } from './task.ts'
import { counterProblem, type StreamObserverFactory } from './observers/index.ts'
import type { StreamTaskDeps } from './task.ts'

export interface StreamTaskServiceOptions {
  db: Db
  clock: Clock
  log: Logger
  inference: InferenceService
  cameras: CameraService
  algorithms: Pick<AlgorithmRegistry, 'get'>
  /** What reacts to each task's tracked objects, in order (runtime/streams/observers). */
  observers: StreamObserverFactory[]
  /** Per-task detector latency; a cancelled task's series are removed (docs/metrics.md "Metrics"). */
  metrics?: StreamTaskMetrics
  /** Tasks with a schedule analyse only while it is on (spec 4.10 Schedule). */
  schedules: Pick<SchedulesService, 'gate'>
  /** Stream-task detections at once (config `streamDetectSlots`; 0 = no limit). */
  detectSlots: number
  /** STREAM_REGION_DETECTION: false turns detection on motion regions off for every task (default true). */
  regionDetection?: boolean
  /** Starts a snapshot's full-resolution search with the detection that may need it (docs/cameras-and-stream-tasks.md "Snapshots"). */
  snapshots?: StreamTaskDeps['snapshots']
}

function checkCounters(config: TaskConfig | undefined): void {
  const problem = config ? counterProblem(config) : null
  if (problem) throw invalidParam(problem.field, problem.reason)
}

/**
 * `ctx.streams` (spec 4.9 TaskCreate / TaskCancle): stream tasks, stored in libsql and
 * resumed when the device starts. Each task loads its pipeline in the sidecar under its own
 * handle and reads its camera through a stream of its own at its rate.
 */
export class StreamTaskService implements StreamTasksService {
  private readonly tasks = new Map<string, StreamTask>()
  /** Every task's turns at the detector (docs/cameras-and-stream-tasks.md "Detector scheduling"). */
  private readonly scheduler: DetectScheduler

  constructor(private readonly options: StreamTaskServiceOptions) {
    this.scheduler = new DetectScheduler(options.detectSlots)
    options.cameras.onRemove((_cameraId, consumers) => {
      for (const taskId of consumers) this.tasks.get(taskId)?.cameraDeleted()
    })
  }

  /** Resumes the stored tasks (device start); one whose pipeline fails to load waits, `stateReason` naming the error (TaskCreate again or Task/update retries). */
  async start(): Promise<void> {
    for (const row of await this.options.db.select().from(streamTasks).orderBy(asc(streamTasks.createdAt))) {
      const task = this.task(row)
      if (!row.enabled) {
        task.disable()
        continue
      }
      try {
        await this.options.inference.load(task.handle, row.algorithmCode, row.taskConfig as TaskConfig)
      } catch (error) {
        this.options.log.error({ taskId: row.taskId, err: (error as Error).message }, 'stream task pipeline failed to load at start')
        task.pipelineFailed(isApiError(error) ? error.item.messageKey : 'api.error.TaskCreateFailed')
        continue
      }
      await task.start()
    }
  }

  async stop(): Promise<void> {
    const all = [...this.tasks.values()]
    this.tasks.clear()
    await Promise.all(all.map((task) => task.stop()))
  }

  async create(input: TaskCreateInput, identity: Identity): Promise<{ reused: boolean }> {
    const { cameras, inference } = this.options
    checkCounters(input.taskConfig)
    await cameras.ensure(input.cameraId)
    this.checkSchedule(input.scheduleId ?? null)
    const sourceFps = cameras.sourceFps(input.cameraId)
    if (sourceFps !== null && input.targetFps > sourceFps)
      throw new ApiError('InvalidParam', { details: { field: 'targetFps', targetFps: input.targetFps, sourceFps }, msgText: `targetFps ${input.targetFps} is above the camera's ${sourceFps} fps`, recommendedAction: RecommendedAction.LOWER_TARGET_FPS })
    const now = this.options.clock.now()
    const existing = this.tasks.get(input.taskId)
    const row: StreamTaskRow = {
      // Absent, the name of the task this taskId already names stays.
      taskId: input.taskId, taskName: input.taskName?.trim() ?? existing?.row.taskName ?? null, algorithmCode: input.algorithmCode, cameraId: input.cameraId, targetFps: input.targetFps,
      taskConfig: input.taskConfig ?? {}, motionGating: input.motionGating ?? true, minDetectIntervalMs: input.minDetectIntervalMs ?? 1000,
      trackedDetectIntervalMs: input.trackedDetectIntervalMs ?? DEFAULT_TRACKED_DETECT_INTERVAL_MS, regionDetection: input.regionDetection ?? true, enabled: true,
      scheduleId: input.scheduleId ?? null, createdBy: identity.accountName, createdAt: now, updatedAt: now,
    }
    if (existing && existing.row.cameraId === row.cameraId && existing.row.algorithmCode === row.algorithmCode && existing.row.targetFps === row.targetFps &&
      JSON.stringify(existing.row.taskConfig) === JSON.stringify(row.taskConfig) && existing.row.motionGating === row.motionGating &&
      existing.row.minDetectIntervalMs === row.minDetectIntervalMs && existing.row.trackedDetectIntervalMs === row.trackedDetectIntervalMs &&
      existing.row.regionDetection === row.regionDetection &&
      existing.row.scheduleId === row.scheduleId) {
      // Only the name differs (or nothing): the running task is kept, with its new name.
      if (existing.row.taskName !== row.taskName) {
        await this.options.db.update(streamTasks).set({ taskName: row.taskName, updatedAt: now }).where(eq(streamTasks.taskId, row.taskId))
        existing.row.taskName = row.taskName
      }
      await this.setEnabled(row.taskId, true)
      return { reused: true }
    }
    if (existing) await this.cancel(input.taskId)
    // The pipeline first: an unknown algorithm or a model that fails leaves nothing behind.
    const task = new StreamTask(row, this.deps())
    await inference.load(task.handle, row.algorithmCode, row.taskConfig as TaskConfig)
    await this.options.db.insert(streamTasks).values(row).onConflictDoUpdate({ target: streamTasks.taskId, set: row })
    this.tasks.set(row.taskId, task)
    await task.start()
    this.options.log.info({ taskId: row.taskId, cameraId: row.cameraId, algorithmCode: row.algorithmCode, targetFps: row.targetFps }, 'stream task started')
    return { reused: false }
  }

  async cancel(taskId: string): Promise<void> {
    const task = this.get(taskId)
    this.tasks.delete(taskId)
    await task.stop()
    await this.options.inference.release(task.handle).catch((error: Error) =>
      this.options.log.warn({ taskId, err: error.message }, 'stream task pipeline release failed'))
    await this.options.db.delete(streamTasks).where(eq(streamTasks.taskId, taskId))
    this.options.metrics?.forget(taskId)
    this.scheduler.forget(taskId)
    this.options.log.info({ taskId }, 'stream task cancelled')
  }

  has(taskId: string): boolean {
    return this.tasks.has(taskId)
  }

  status(taskId: string): StreamTaskStatus {
    return this.get(taskId).status()
  }

  list(): StreamTaskStatus[] {
    return [...this.tasks.values()].map((task) => task.status()).sort((a, b) => Number(a.createdAt) - Number(b.createdAt))
  }

  latestResult(cameraId: string): StreamTaskResult | null {
    let newest: StreamTaskResult | null = null
    for (const task of this.tasks.values())
      if (task.row.cameraId === cameraId && task.latest && (!newest || task.latest.time > newest.time)) newest = task.latest
    return newest
  }

  async setEnabled(taskId: string, enabled: boolean): Promise<void> {
    const task = this.get(taskId)
    if (task.row.enabled === enabled) return
    await this.options.db.update(streamTasks).set({ enabled, updatedAt: this.options.clock.now() }).where(eq(streamTasks.taskId, taskId))
    task.row.enabled = enabled
    if (enabled) {
      await task.start()
    } else {
      await task.stop()
      task.disable()
    }
  }

  async update(input: TaskUpdateInput): Promise<void> {
    const old = this.get(input.taskId).row
    checkCounters(input.taskConfig)
    const sourceFps = this.options.cameras.sourceFps(old.cameraId)
    const targetFps = input.targetFps ?? old.targetFps
    if (sourceFps !== null && targetFps > sourceFps)
      throw new ApiError('InvalidParam', { details: { field: 'targetFps', targetFps, sourceFps }, msgText: `targetFps ${targetFps} is above the camera's ${sourceFps} fps`, recommendedAction: RecommendedAction.LOWER_TARGET_FPS })
    const row: StreamTaskRow = {
      ...old, taskName: input.taskName === undefined ? old.taskName : input.taskName?.trim() ?? null, targetFps, taskConfig: input.taskConfig ?? old.taskConfig, motionGating: input.motionGating ?? old.motionGating,
      minDetectIntervalMs: input.minDetectIntervalMs ?? old.minDetectIntervalMs,
      trackedDetectIntervalMs: input.trackedDetectIntervalMs ?? old.trackedDetectIntervalMs,
      regionDetection: input.regionDetection ?? old.regionDetection, updatedAt: this.options.clock.now(),
      scheduleId: input.scheduleId === undefined ? old.scheduleId : input.scheduleId,
    }
    this.checkSchedule(row.scheduleId)
    const current = this.get(input.taskId)
    // The new config first (thresholds, regions): a config the pipeline refuses changes nothing.
    if (input.taskConfig) await this.options.inference.load(current.handle, row.algorithmCode, row.taskConfig as TaskConfig)
    await current.stop()
    await this.options.db.update(streamTasks).set(row).where(eq(streamTasks.taskId, row.taskId))
    const task = this.task(row)
    if (row.enabled) await task.start()
    else task.disable()
  }

  private checkSchedule(scheduleId: string | null): void {
    if (scheduleId !== null && !this.options.schedules.gate(scheduleId)) throw new ApiError('ScheduleNotFound', { details: { scheduleId } })
  }

  private get(taskId: string): StreamTask {
    const task = this.tasks.get(taskId)
    if (!task) throw new ApiError('NotCreated', { details: { taskId } })
    return task
  }

  private task(row: StreamTaskRow): StreamTask {
    const task = new StreamTask(row, this.deps())
    this.tasks.set(row.taskId, task)
    return task
  }

  private deps() {
    const { log, inference, cameras, algorithms, observers, metrics, schedules, regionDetection = true, snapshots } = this.options
    return { log, inference, cameras, algorithms, observers, metrics, schedules, scheduler: this.scheduler, regionDetection, snapshots }
  }
}
