import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { TaskActivity } from '../../shared/aihost/types.ts'
import { isApiError } from '../../shared/errors/index.ts'
import type { Clock, Logger } from '../../shared/handler.ts'
import type { InferenceService } from '../../shared/inference/types.ts'

/** Where the latest annotated picture of each task is kept (one file per task, replaced). */
export const overviewDir = (dataPath: string) => path.join(dataPath, 'overview')

/**
 * Wraps the inference client so that every detection is counted per task (handle): number
 * served, failures with the last error, stage timings of the last run, and the latest
 * overlay picture written to disk. Handlers read it through `ctx.device.taskActivity`.
 */
export function recordTaskActivity(inner: InferenceService, dataPath: string, clock: Clock, log: Logger) {
  const byHandle = new Map<string, TaskActivity>()
  const dir = overviewDir(dataPath)
  mkdirSync(dir, { recursive: true })
  const activityOf = (handle: string) => {
    let entry = byHandle.get(handle)
    if (!entry) {
      entry = { detections: 0, failures: 0, lastDetectionAt: null, lastError: null, lastTimings: null, overviewFile: null, overviewAt: null }
      byHandle.set(handle, entry)
    }
    return entry
  }
  // The task id comes from the client: the file is named by its hash, never by the id itself.
  const overviewFileOf = (handle: string) => path.join(dir, `${createHash('sha256').update(handle).digest('hex').slice(0, 32)}.jpg`)
  const saveOverview = async (handle: string, jpeg: Buffer) => {
    const file = overviewFileOf(handle)
    const temporary = `${file}.${process.pid}.tmp`
    await writeFile(temporary, jpeg)
    await rename(temporary, file)
    return file
  }

  const inference: InferenceService = {
    load: (handle, algorithmId, taskConfig) => inner.load(handle, algorithmId, taskConfig),
    async release(handle) {
      await inner.release(handle)
      // A cancelled task's counters and picture go with it: task ids are chosen by clients, so
      // nothing may accumulate per id, and a task created again under the same id starts afresh.
      byHandle.delete(handle)
      await rm(overviewFileOf(handle), { force: true }).catch((error) => log.warn({ err: error }, 'could not remove the overview picture'))
    },
    has: (handle) => inner.has(handle),
    stats: () => inner.stats(),
    exclusive: (handle, step) => inner.exclusive(handle, step),
    inspectModel: (file) => inner.inspectModel(file),
    async detect(request) {
      const entry = activityOf(request.handle)
      try {
        const outcome = await inner.detect(request)
        entry.detections += 1
        entry.lastDetectionAt = clock.now()
        entry.lastTimings = outcome.timings
        if (outcome.overlayJpeg) {
          try {
            entry.overviewFile = await saveOverview(request.handle, outcome.overlayJpeg)
            entry.overviewAt = entry.lastDetectionAt
          } catch (error) {
            log.warn({ err: error }, 'could not keep the overview picture')
          }
        }
        return outcome
      } catch (error) {
        entry.failures += 1
        entry.lastError = isApiError(error)
          ? { messageKey: error.item.messageKey, msgText: error.item.msgText, at: clock.now() }
          : { messageKey: 'api.error.Internal', msgText: String((error as Error)?.message ?? error).slice(0, 200), at: clock.now() }
        throw error
      }
    },
  }
  return { inference, activity: (taskId: string) => byHandle.get(taskId) ?? null }
}
