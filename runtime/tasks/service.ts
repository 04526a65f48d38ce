import type { AlgorithmRegistry } from '../../shared/algorithms/types.ts'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type { DetectionResult, ImageSource, InferenceService } from '../../shared/inference/types.ts'
import { KeyedMutex } from '../keyed-mutex.ts'
import type { UploadLease, UploadService } from '../../shared/uploads/index.ts'
import type {
  CreateTaskRequest, DetectTaskRequest, TaskActivity, TaskConfig, TaskRow, TaskStatus, TasksService,
} from '../../shared/tasks/types.ts'
import { TaskActivityLog } from './activity.ts'
import { DataUrl } from '../../shared/http/data-url.ts'
import { FullPictures } from './full-picture.ts'
import { decodeBase64Image, downloadImage, pickImageSource } from './image-source.ts'
import { findTask, listTasks, markCancelled, saveCreatedTask } from './store.ts'
import { monotonicNow } from '../../shared/clock.ts'
import { nextTaskState } from './transitions.ts'

export interface TaskServiceOptions {
  db: Db
  config: Config
  clock: Clock
  log: Logger
  inference: InferenceService
  uploads: Pick<UploadService, 'lease'>
  /** Which algorithms exist: asked of their one owner, never of the `algorithms` table. */
  algorithms: Pick<AlgorithmRegistry, 'get'>
}

/**
 * `ctx.tasks`: the owner of the image-analysis task lifecycle of spec 3.2, whose moves are the
 * transition table of transitions.ts (this service is the only writer of a task's state). Every transition of
 * one task (create, the start of a detection, cancel, a config change) runs under that task's
 * lock, so they never interleave: a cancel either sees a detection in flight (the inference
 * service refuses the release with TaskBusy) or the detection sees the task cancelled.
 */
export class TaskService implements TasksService {
  readonly #locks = new KeyedMutex()
  readonly #activity: TaskActivityLog
  readonly #pictures: FullPictures

  constructor(private readonly options: TaskServiceOptions) {
    this.#activity = new TaskActivityLog(options.config.dataPath, options.clock, options.log)
    this.#pictures = new FullPictures(options.config, options.inference)
  }

  async create(request: CreateTaskRequest) {
    const { db, inference, clock, log } = this.options
    // spec 7.1: an algorithmCode that does not exist → ActionAlgLoadFailed (every registered one runs).
    if (!this.options.algorithms.get(request.algorithmCode)) throw new ApiError('ActionAlgLoadFailed', { details: { algorithmCode: request.algorithmCode } })
    const previous = await this.#locks.run(request.taskId, async () => {
      const existing = await findTask(db, request.taskId)
      const state = nextTaskState(existing?.state ?? 'none', 'create', { taskId: request.taskId })
      const created = existing?.state === 'created' ? existing : undefined
      // spec 3.2: created + PTaskCreate with the same taskId → the existing task is reused,
      // unconditionally. With another algorithmCode the task id is kept and the task now runs
      // that algorithm (docs/detection.md "Tasks"): the old pipeline is released first (TaskBusy while a
      // detection runs on it, as for a cancel, spec 4.8) and the old taskConfig is not carried
      // over. A taskConfig sent again replaces the old one.
      const switching = created !== undefined && created.algorithmCode !== request.algorithmCode
      if (switching) {
        await inference.release(request.taskId)
        await this.#activity.forget(request.taskId)
      }
      const taskConfig = request.taskConfig ?? (created && !switching ? created.taskConfig as TaskConfig : {})
      await inference.load(request.taskId, request.algorithmCode, taskConfig)
      await saveCreatedTask(db, { taskId: request.taskId, algorithmCode: request.algorithmCode, taskConfig, createdBy: request.createdBy, state }, clock.now())
      return created?.algorithmCode ?? null
    })
    log.info({ taskId: request.taskId, algorithmCode: request.algorithmCode, reused: previous !== null, ...(previous ? { previousAlgorithmCode: previous } : {}) }, 'task created')
    return { reused: previous !== null, previousAlgorithmCode: previous }
  }

  async detect(request: DetectTaskRequest): Promise<DetectionResult> {
    const { inference, config, clock } = this.options
    const { taskId, algorithmCode } = request
    const source = pickImageSource(request.image)
    const urlMode = Boolean(config.fileServiceBaseUrl)
    // Checked before the image is fetched, so a NotCreated costs no download or upload lease.
    await this.#created(taskId, algorithmCode)
    let image: ImageSource
    let lease: UploadLease | null = null
    if (source === 'imageBase64') image = decodeBase64Image(request.image.imageBase64!)
    else if (source === 'imageUrl') image = await downloadImage(request.image.imageUrl!, { config, signal: request.signal })
    else {
      // spec 3.1, 5.4: the complete upload, for the identity that made it; spec 4.7: consumed
      // only by a successful detection (a failed one leaves it for a retry). The sidecar reads
      // the staged file in place (no copy).
      lease = await this.options.uploads.lease(request.image.uploadId!, request.identity, 'image')
      image = { kind: 'path', path: lease.path }
    }
    try {
      // spec 3.2: the state check, a load on demand and the detection going in flight happen
      // under the task's lock; the result is awaited once the lock is free.
      const running = await this.#locks.run(taskId, async () => {
        const task = await this.#created(taskId, algorithmCode)
        // A created task the sidecar does not hold (its restore failed): load it again.
        if (!inference.has(taskId)) await inference.load(taskId, task.algorithmCode, task.taskConfig as TaskConfig)
        // spec 2.6: in URL mode the overlay is rendered when the URL is first fetched, not here.
        const started = inference.detect({ handle: taskId, image, purpose: 'image', deadline: monotonicNow() + config.detectTimeoutMs, signal: request.signal, overlay: !urlMode })
        started.catch(() => {}) // awaited below
        return { started }
      })
      const outcome = await running.started.catch((error) => {
        this.#activity.failed(taskId, error)
        throw error
      })
      const picture = urlMode ? await this.#pictures.defer(image, outcome.result, clock.now()) : null
      await this.#activity.succeeded(taskId, outcome, picture?.id)
      const result: DetectionResult = {
        algorithmCode: outcome.result.algorithmCode,
        timestamp: outcome.result.timestamp,
        fullPicture: picture ? picture.url : new DataUrl('image/jpeg', outcome.overlayJpeg!),
        areaList: outcome.result.areaList,
      }
      await lease?.commit()
      return result
    } catch (error) {
      await lease?.abandon()
      throw error
    }
  }

  fullPicture(id: string): Promise<string> {
    return this.#pictures.file(id, this.options.clock.now())
  }

  async cancel(request: { taskId: string; algorithmCode?: string }): Promise<void> {
    const { taskId, algorithmCode } = request
    await this.#locks.run(taskId, async () => {
      const task = await findTask(this.options.db, taskId)
      const details = { taskId, ...(algorithmCode ? { algorithmCode } : {}) }
      const state = nextTaskState(task?.state ?? 'none', 'cancel', details)
      if (algorithmCode !== undefined && algorithmCode !== task!.algorithmCode) throw new ApiError('NotCreated', { details })
      // spec 3.2: only when no request is still running inference on the task (TaskBusy, retryable).
      await this.options.inference.release(taskId)
      await this.#activity.forget(taskId)
      await markCancelled(this.options.db, taskId, this.options.clock.now(), state)
    })
    this.options.log.info({ taskId }, 'task cancelled')
  }

  async get(taskId: string): Promise<TaskRow> {
    const task = await findTask(this.options.db, taskId)
    if (!task) throw new ApiError('NotCreated', { details: { taskId } })
    return task
  }

  status(task: TaskRow): TaskStatus {
    const activity = this.#activity.get(task.taskId)
    return {
      taskId: task.taskId,
      algorithmCode: task.algorithmCode,
      state: task.state,
      loaded: task.state === 'created' && this.options.inference.has(task.taskId),
      createdAt: String(task.createdAt),
      updatedAt: String(task.updatedAt),
      detections: activity?.detections ?? 0,
      failures: activity?.failures ?? 0,
      running: this.options.inference.running(task.taskId),
      lastDetectionAt: activity?.lastDetectionAt == null ? null : String(activity.lastDetectionAt),
      lastError: activity?.lastError ? { ...activity.lastError, at: String(activity.lastError.at) } : null,
    }
  }

  activity(taskId: string): TaskActivity | null {
    return this.#activity.get(taskId)
  }

  list(query: { state?: TaskRow['state']; offset: number; limit: number }) {
    return listTasks(this.options.db, { ...query, state: query.state ?? 'created' })
  }

  async reconfigure(taskId: string, change: (task: TaskRow) => TaskConfig) {
    // Under the task's lock: a cancel cannot slip between the state check and the save, which
    // would mark a cancelled task created again.
    return this.#locks.run(taskId, async () => {
      const task = await this.get(taskId)
      const state = nextTaskState(task.state, 'reconfigure', { taskId, state: task.state })
      const taskConfig = change(task)
      // Loading an existing handle with the same algorithm applies the new config (inference contract).
      await this.options.inference.load(taskId, task.algorithmCode, taskConfig)
      await saveCreatedTask(this.options.db, { taskId, algorithmCode: task.algorithmCode, taskConfig, createdBy: task.createdBy, state }, this.options.clock.now())
      return { task, taskConfig }
    })
  }

  /** spec 3.2: a missing, cancelled or mismatched task → NotCreated. */
  async #created(taskId: string, algorithmCode: string): Promise<TaskRow> {
    const task = await findTask(this.options.db, taskId)
    nextTaskState(task?.state ?? 'none', 'detect', { taskId, algorithmCode })
    if (task!.algorithmCode !== algorithmCode) throw new ApiError('NotCreated', { details: { taskId, algorithmCode } })
    return task!
  }
}
