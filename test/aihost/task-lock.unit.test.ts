import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import OperateNode from '../../functions/aihost/OperateNode.ts'
import PTaskCancle from '../../functions/aihost/PTaskCancle.ts'
import PTaskDetectPic from '../../functions/aihost/PTaskDetectPic.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Identity } from '../../shared/handler.ts'
import type { InferenceService } from '../../shared/inference/types.ts'
import { findTask, saveCreatedTask } from '../../runtime/tasks/store.ts'
import { TaskService } from '../../runtime/tasks/service.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

const admin: Identity = { userId: 'admin', accountName: 'admin', sessionId: null, transport: 'internal', passwordChangeRequired: false }

/**
 * An inference service that behaves like the sidecar client (loaded handles, in-flight
 * count, TaskBusy) and whose `release` can be held open: the window in which PTaskCancle has
 * released the pipeline but not yet marked the task cancelled.
 */
function scriptedInference() {
  const loaded = new Set<string>()
  const inflight = new Map<string, number>()
  let holdRelease: Promise<void> | null = null
  let releaseReached: () => void = () => {}
  const service: InferenceService = {
    async load(handle) { loaded.add(handle) },
    async release(handle) {
      if ((inflight.get(handle) ?? 0) > 0) throw new ApiError('TaskBusy', { details: { taskId: handle } })
      loaded.delete(handle)
      releaseReached()
      await holdRelease
    },
    has: (handle) => loaded.has(handle),
    running: (handle) => inflight.get(handle) ?? 0,
    async detect(request) {
      inflight.set(request.handle, (inflight.get(request.handle) ?? 0) + 1)
      try {
        if (!loaded.has(request.handle)) throw new ApiError('NotCreated', { details: { taskId: request.handle } })
        return { result: { algorithmCode: 'face-detection', timestamp: '1', areaList: [] }, overlayJpeg: Buffer.from([0xff, 0xd8, 0xff, 0xd9]), timings: {} }
      } finally {
        inflight.set(request.handle, inflight.get(request.handle)! - 1)
      }
    },
    renderOverlay: async () => { throw new Error('not used') },
    stats: async () => { throw new Error('not used') },
    inspectModel: async () => { throw new Error('not used') },
  }
  return {
    service,
    loaded,
    /** The next release stops after unloading until the returned function is called. */
    holdNextRelease() {
      let open!: () => void
      holdRelease = new Promise((resolve) => { open = resolve })
      const reached = new Promise<void>((resolve) => { releaseReached = resolve })
      return { reached, open: () => { holdRelease = null; open() } }
    },
  }
}

describe('PTaskCancle never interleaves with PTaskDetectPic or OperateNode (spec 3.2)', () => {
  let t: TestRuntime
  beforeAll(async () => { t = await createTestRuntime() })
  afterAll(async () => { await t?.close() })

  /**
   * A created task, a PTaskCancle held open after releasing the pipeline (the task not yet
   * marked cancelled), and `during` started in that window; the cancel then goes on.
   * Returns what `during` answered (its messageKey when it failed).
   */
  async function raceWithCancel(taskId: string, during: (ctx: never) => unknown) {
    const inference = scriptedInference()
    const base = t.ctx(admin)
    const db = t.runtime.services.db
    // The real task service (its locks), over the scripted inference.
    const tasks = new TaskService({ db, config: base.config, clock: base.clock, log: base.log, inference: inference.service, uploads: base.uploads, algorithms: base.algorithms })
    const ctx = { ...base, inference: inference.service, tasks }
    await saveCreatedTask(db, { taskId, algorithmCode: 'face-detection', taskConfig: {}, createdBy: 'admin' }, Date.now())
    inference.loaded.add(taskId)

    const held = inference.holdNextRelease()
    const cancelling = PTaskCancle.handle({ taskId, algorithmCode: 'face-detection' }, ctx as never)
    await held.reached // pipeline released, task not yet marked cancelled
    expect((await findTask(db, taskId))!.state).toBe('created')
    const outcome = Promise.resolve(during(ctx as never)).then(() => 'succeeded', (error: ApiError) => error.item.messageKey)
    await new Promise((r) => setTimeout(r, 50))
    held.open()
    await cancelling
    return { outcome: await outcome, state: (await findTask(db, taskId))!.state, loaded: inference.loaded.has(taskId) }
  }

  it('a detection that passed its state check while a cancel was releasing does not reload the cancelled task', async () => {
    const taskId = 'race-task'
    const race = await raceWithCancel(taskId, (ctx) =>
      PTaskDetectPic.handle({ taskId, algorithmCode: 'face-detection', imageBase64: Buffer.from('any image').toString('base64') }, ctx))
    expect(race).toEqual({ outcome: 'api.error.NotCreated', state: 'cancelled', loaded: false })
  })

  it('OperateNode that read the task while a cancel was releasing does not mark the cancelled task created again', async () => {
    const taskId = 'race-operate'
    const race = await raceWithCancel(taskId, (ctx) =>
      OperateNode.handle({ taskId, nodeId: 'face', operation: 'configure', params: { scoreThreshold: 0.9 } }, ctx))
    expect(race).toEqual({ outcome: 'api.error.NotCreated', state: 'cancelled', loaded: false })
  })
})
