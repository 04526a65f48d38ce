import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { isApiError } from '../../shared/errors/index.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type { DetectOutcome } from '../../shared/inference/types.ts'
import type { TaskActivity } from '../../shared/tasks/types.ts'

/** Where the latest annotated picture of each task is kept (one file per task, replaced). */
export const overviewDir = (dataPath: string) => path.join(dataPath, 'overview')

/**
 * What the device observed of each task's detections since it started: number served,
 * failures with the last error, stage timings of the last run, and the latest overlay picture
 * on disk (QueryTaskStatus, QueryTaskInfo, QueryTaskOverviewFile).
 */
export class TaskActivityLog {
  readonly #byTask = new Map<string, TaskActivity>()
  readonly #dir: string

  constructor(dataPath: string, private readonly clock: Clock, private readonly log: Logger) {
    this.#dir = overviewDir(dataPath)
    mkdirSync(this.#dir, { recursive: true })
  }

  get(taskId: string): TaskActivity | null {
    return this.#byTask.get(taskId) ?? null
  }

  /** `picture`: the fullPicture URL's id when the overlay is rendered on its first fetch. */
  async succeeded(taskId: string, outcome: DetectOutcome, picture?: string): Promise<void> {
    const entry = this.#entry(taskId)
    entry.detections += 1
    entry.lastDetectionAt = this.clock.now()
    entry.lastTimings = outcome.timings
    if (picture) {
      entry.overviewPicture = picture
      entry.overviewFile = null
      entry.overviewAt = entry.lastDetectionAt
      await rm(this.#overviewFileOf(taskId), { force: true }).catch((error) => this.log.warn({ err: error }, 'could not remove the overview picture'))
      return
    }
    if (!outcome.overlayJpeg) return
    try {
      entry.overviewFile = await this.#saveOverview(taskId, outcome.overlayJpeg)
      entry.overviewPicture = null
      entry.overviewAt = entry.lastDetectionAt
    } catch (error) {
      this.log.warn({ err: error }, 'could not keep the overview picture')
    }
  }

  failed(taskId: string, error: unknown): void {
    const entry = this.#entry(taskId)
    entry.failures += 1
    entry.lastError = isApiError(error)
      ? { messageKey: error.item.messageKey, msgText: error.item.msgText, at: this.clock.now() }
      : { messageKey: 'api.error.Internal', msgText: String((error as Error)?.message ?? error).slice(0, 200), at: this.clock.now() }
  }

  /**
   * A cancelled task's counters and picture go with it: task ids are chosen by clients, so
   * nothing may accumulate per id, and a task created again under the same id starts afresh.
   */
  async forget(taskId: string): Promise<void> {
    this.#byTask.delete(taskId)
    await rm(this.#overviewFileOf(taskId), { force: true }).catch((error) => this.log.warn({ err: error }, 'could not remove the overview picture'))
  }

  #entry(taskId: string): TaskActivity {
    let entry = this.#byTask.get(taskId)
    if (!entry) {
      entry = { detections: 0, failures: 0, lastDetectionAt: null, lastError: null, lastTimings: null, overviewFile: null, overviewPicture: null, overviewAt: null }
      this.#byTask.set(taskId, entry)
    }
    return entry
  }

  // The task id comes from the client: the file is named by its hash, never by the id itself.
  #overviewFileOf(taskId: string) {
    return path.join(this.#dir, `${createHash('sha256').update(taskId).digest('hex').slice(0, 32)}.jpg`)
  }

  async #saveOverview(taskId: string, jpeg: Buffer) {
    const file = this.#overviewFileOf(taskId)
    const temporary = `${file}.${process.pid}.tmp`
    await writeFile(temporary, jpeg)
    await rename(temporary, file)
    return file
  }
}
