import { DeviceClient, uuid } from '../client/client.ts'
import { DEBUG_MARKER } from '../client/detect.ts'
import { DeviceError } from '../client/errors.ts'
import { ROUTES } from '../client/routes.ts'

const TASKS_KEY = 'device-console.tasks'

/** How long a task the console created stays loaded without a detection (it holds model memory). */
export const IDLE_CANCEL_MS = 5 * 60_000

/**
 * The image-analysis tasks this browser tab created (spec 3.2): one per algorithm, reused for
 * every image (spec 1 step 6), kept in sessionStorage so a reload reuses them too, and cancelled
 * when the console is done with them (the Detection page left or idle, sign-out, the tab
 * closed): a task left created keeps its model loaded and its algorithm from being deleted.
 */
export class ConsoleTasks {
  #idle: ReturnType<typeof setTimeout> | null = null

  constructor(private readonly client: DeviceClient) {}

  #load(): Record<string, string> {
    try {
      const value = JSON.parse(sessionStorage.getItem(TASKS_KEY) ?? '{}')
      return value && typeof value === 'object' ? value : {}
    } catch {
      return {}
    }
  }

  #save(tasks: Record<string, string>) {
    if (Object.keys(tasks).length) sessionStorage.setItem(TASKS_KEY, JSON.stringify(tasks))
    else sessionStorage.removeItem(TASKS_KEY)
  }

  /** algorithmCode → taskId of the tasks this tab created and has not cancelled. */
  entries(): [string, string][] {
    return Object.entries(this.#load())
  }

  isOwn(taskId: string): boolean {
    return Object.values(this.#load()).includes(taskId)
  }

  /**
   * The tab's task for an algorithm, created when there is none (or `fresh`: the device lost it,
   * spec 7.1 NotCreated). Creating an existing task id again only reuses it (spec 3.2).
   */
  async ensure(algorithmCode: string, fresh = false): Promise<string> {
    this.#stopIdle()
    const known = this.#load()[algorithmCode]
    if (known && !fresh) return known
    const taskId = known ?? uuid()
    // spec 8: task creation may take up to 120 s (model loading).
    await this.client.taskCreate({ algorithmCode, algorithmUpdateTime: String(Date.now()), taskId, mvDebug: DEBUG_MARKER })
    this.#save({ ...this.#load(), [algorithmCode]: taskId })
    return taskId
  }

  /** After a detection: the tasks are cancelled unless another detection comes within IDLE_CANCEL_MS. */
  idle() {
    this.#stopIdle()
    this.#idle = setTimeout(() => { this.cancelAll().catch(() => undefined) }, IDLE_CANCEL_MS)
  }

  #stopIdle() {
    if (this.#idle) clearTimeout(this.#idle)
    this.#idle = null
  }

  /** Forgets a task cancelled elsewhere (the Tasks page). */
  forget(taskId: string) {
    this.#save(Object.fromEntries(Object.entries(this.#load()).filter(([, id]) => id !== taskId)))
  }

  /** Cancels every task this tab created; a task the device no longer has (NotCreated) is done too. */
  async cancelAll(): Promise<void> {
    this.#stopIdle()
    for (const [algorithmCode, taskId] of this.entries()) {
      try {
        await this.client.taskCancel({ taskId, algorithmCode, mvDebug: DEBUG_MARKER })
      } catch (error) {
        // Kept for a later try unless the device says there is nothing to cancel.
        if (!(error instanceof DeviceError && error.messageKey === 'api.error.NotCreated')) continue
      }
      this.forget(taskId)
    }
  }

  /**
   * The tab is closing (or reloading): the cancels go out as keepalive requests, which the
   * browser finishes after the page is gone. A reloaded tab creates its tasks again on demand.
   */
  cancelOnUnload() {
    const mtk = this.client.mtk
    if (!mtk) return
    for (const [algorithmCode, taskId] of this.entries()) {
      fetch(this.client.baseUrl + ROUTES.taskCancel, {
        method: 'POST', keepalive: true, headers: { 'content-type': 'application/json', mtk },
        body: JSON.stringify({ taskId, algorithmCode, mvDebug: DEBUG_MARKER }),
      }).catch(() => undefined)
    }
    sessionStorage.removeItem(TASKS_KEY)
  }
}
