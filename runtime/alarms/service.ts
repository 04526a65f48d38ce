import { randomUUID } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type {
  AddPolicyInput, AlarmPoliciesService, PagePoliciesInput, PolicyAction, PolicyActionView, PolicyConditions, PolicyView, UpdatePolicyInput,
} from '../../shared/alarms/types.ts'
import { POLICY_LIMITS } from '../../shared/alarms/types.ts'
import type { AudioService } from '../../shared/audio/types.ts'
import type { Db } from '../db/client.ts'
import { alarmPolicies } from '../../shared/db/schema/index.ts'
import { KeyedMutex } from '../keyed-mutex.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { ClipRecorder } from '../../shared/recording/clip-recorder.ts'
import type { SchedulesService } from '../../shared/schedules/types.ts'
import type { StreamTasksService } from '../../shared/streams/types.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'
import type { AlarmPictures } from './pictures.ts'
import { checkRegion, regionsLeftUnwatched } from './regions.ts'

export type PolicyRow = typeof alarmPolicies.$inferSelect

export interface AlarmPolicyServiceOptions {
  db: Db
  clock: Clock
  log: Logger
  schedules: Pick<SchedulesService, 'gate'>
  cameras: { ensure(cameraId: string): Promise<void> }
  audio(): Pick<AudioService, 'fileOf' | 'columns'>
  recorder(): ClipRecorder | null
  pictures: AlarmPictures
}

const view = (row: PolicyRow): PolicyView => ({
  policyId: row.policyId, policyName: row.policyName, enabled: row.enabled, conditions: row.conditions, scheduleId: row.scheduleId, cooldownS: row.cooldownS,
  actions: row.actions.map((a): PolicyActionView => a.type === 'webhook' ? { type: 'webhook', url: a.url, secretSet: !!a.secret } : a),
  createdAt: String(row.createdAt), updateTime: String(row.updatedAt),
})

/**
 * `ctx.alarms` (spec 4.10 Linkage / alarm policy, `/gtw/cwai/AlarmStrage/`): policies stored in
 * libsql and kept in memory, where each stream task's observer reads them on every analysed
 * frame (runtime/streams/observers/alarm-policies.ts): an edit or a switch applies at once.
 */
export class AlarmPolicyService implements AlarmPoliciesService {
  readonly #rows = new Map<string, PolicyRow>()
  /** Writes one at a time: a name is checked unique and stored in one step, a deleted policy stays deleted. */
  readonly #writes = new KeyedMutex()

  /** Stream tasks: made after this service (they read its policies), passed in the wire phase (runtime/services.ts). */
  #streams: Pick<StreamTasksService, 'has' | 'status' | 'list'> | null = null

  constructor(private readonly options: AlarmPolicyServiceOptions) {}

  /** Wire phase (docs/architecture.md "Start-up phases"): the stream tasks whose regions and configs policies refer to. */
  connectStreams(streams: Pick<StreamTasksService, 'has' | 'status' | 'list'>): void {
    this.#streams = streams
  }

  #streamTasks(): Pick<StreamTasksService, 'has' | 'status' | 'list'> {
    if (!this.#streams) throw new Error('alarm policies: stream tasks are not wired (runtime/services.ts)')
    return this.#streams
  }

  async start(): Promise<void> {
    for (const row of await this.options.db.select().from(alarmPolicies)) this.#rows.set(row.policyId, row)
  }

  /** The switched-on policies whose task or camera condition takes in this task. */
  forTask(taskId: string, cameraId: string): PolicyRow[] {
    const out: PolicyRow[] = []
    for (const row of this.#rows.values()) {
      const { conditions: c } = row
      if (row.enabled && (c.taskId === undefined || c.taskId === taskId) && (c.cameraId === undefined || c.cameraId === cameraId)) out.push(row)
    }
    return out
  }

  add(input: AddPolicyInput, identity: Identity): Promise<{ policyId: string }> {
    return this.#writes.run('', () => this.#add(input, identity))
  }

  async #add(input: AddPolicyInput, identity: Identity): Promise<{ policyId: string }> {
    const now = this.options.clock.now()
    const row: PolicyRow = {
      policyId: randomUUID(), policyName: input.policyName, enabled: input.enabled ?? true, conditions: input.conditions, scheduleId: input.scheduleId ?? null,
      cooldownS: input.cooldownS ?? POLICY_LIMITS.defaultCooldownS, actions: input.actions ?? [], createdBy: identity.accountName, createdAt: now, updatedAt: now,
    }
    await this.#check(row)
    await this.options.db.insert(alarmPolicies).values(row)
    this.#rows.set(row.policyId, row)
    this.options.log.info({ policyId: row.policyId, policyName: row.policyName }, 'alarm policy added')
    return { policyId: row.policyId }
  }

  update(input: UpdatePolicyInput): Promise<PolicyView> {
    return this.#writes.run('', () => this.#update(input))
  }

  async #update(input: UpdatePolicyInput): Promise<PolicyView> {
    const old = this.#row(input.policyId)
    const row: PolicyRow = {
      ...old, policyName: input.policyName ?? old.policyName, enabled: input.enabled ?? old.enabled, conditions: input.conditions ?? old.conditions,
      scheduleId: input.scheduleId === undefined ? old.scheduleId : input.scheduleId, cooldownS: input.cooldownS ?? old.cooldownS,
      actions: input.actions ? keepSecrets(input.actions, old.actions) : old.actions, updatedAt: this.options.clock.now(),
    }
    await this.#check(row)
    await this.options.db.update(alarmPolicies).set(row).where(eq(alarmPolicies.policyId, row.policyId))
    this.#rows.set(row.policyId, row)
    this.options.log.info({ policyId: row.policyId, policyName: row.policyName }, 'alarm policy updated')
    return view(row)
  }

  remove(policyId: string): Promise<void> {
    return this.#writes.run('', () => this.#remove(policyId))
  }

  async #remove(policyId: string): Promise<void> {
    this.#row(policyId)
    await this.options.db.delete(alarmPolicies).where(eq(alarmPolicies.policyId, policyId))
    this.#rows.delete(policyId)
    this.options.log.info({ policyId }, 'alarm policy deleted')
  }

  async page(query: PagePoliciesInput) {
    const needle = query.policyName?.toLowerCase() ?? ''
    const matching = [...this.#rows.values()].filter((r) => r.policyName.toLowerCase().includes(needle) &&
      (query.taskId === undefined || r.conditions.taskId === query.taskId) && (query.cameraId === undefined || r.conditions.cameraId === query.cameraId))
      .sort((a, b) => a.createdAt - b.createdAt || a.policyId.localeCompare(b.policyId))
    return { total: matching.length, rows: matching.slice((query.pageNum - 1) * query.pageSize, query.pageNum * query.pageSize).map(view) }
  }

  async get(policyId: string): Promise<PolicyView> {
    return view(this.#row(policyId))
  }

  setEnabled(policyIds: string[], enabled: boolean): Promise<PolicyView[]> {
    return this.#writes.run('', () => this.#setEnabled(policyIds, enabled))
  }

  async #setEnabled(policyIds: string[], enabled: boolean): Promise<PolicyView[]> {
    const missing = policyIds.filter((id) => !this.#rows.has(id))
    if (missing.length > 0) throw new ApiError('AlarmPolicyNotFound', { details: { policyIds: missing } })
    const updatedAt = this.options.clock.now()
    await this.options.db.transaction(async (tx) => {
      for (const policyId of policyIds) await tx.update(alarmPolicies).set({ enabled, updatedAt }).where(eq(alarmPolicies.policyId, policyId))
    })
    return policyIds.map((id) => {
      const row = { ...this.#row(id), enabled, updatedAt }
      this.#rows.set(id, row)
      return view(row)
    })
  }

  picture(alarmId: string): Promise<string> {
    return this.options.pictures.file(alarmId)
  }

  checkTaskRegions(taskId: string, taskConfig: TaskConfig): void {
    const lost = regionsLeftUnwatched([...this.#rows.values()], this.#streamTasks().list(), taskId, taskConfig)
    if (lost.length === 0) return
    const areaIds = [...new Set(lost.map((p) => p.conditions.areaId!))]
    throw new ApiError('RegionInUse', {
      details: { taskId, areaIds, policies: lost.map((p) => ({ policyId: p.policyId, policyName: p.policyName, areaId: p.conditions.areaId! })) },
      msgText: `Alarm policies watch ${areaIds.length === 1 ? 'region' : 'regions'} ${areaIds.map((a) => `"${a}"`).join(', ')} of stream task ${taskId}, which this change removes: ${lost.map((p) => `"${p.policyName}"`).join(', ')}. Change or delete them first; nothing was changed.`,
    })
  }

  #row(policyId: string): PolicyRow {
    const row = this.#rows.get(policyId)
    if (!row) throw new ApiError('AlarmPolicyNotFound', { details: { policyId } })
    return row
  }

  /** Everything a policy refers to exists, and the device can take each of its actions. */
  async #check(row: PolicyRow): Promise<void> {
    for (const other of this.#rows.values())
      if (other.policyName === row.policyName && other.policyId !== row.policyId) throw new ApiError('AlarmPolicyNameExists', { details: { policyName: row.policyName, policyId: other.policyId } })
    const { taskId, cameraId } = row.conditions
    if (taskId !== undefined && !this.#streamTasks().has(taskId)) throw new ApiError('NotCreated', { details: { field: '/conditions/taskId', taskId } })
    if (cameraId !== undefined) await this.options.cameras.ensure(cameraId)
    checkRegion(row.conditions, this.#streamTasks().list())
    this.#checkRecognition(row.conditions)
    if (row.scheduleId !== null && !this.options.schedules.gate(row.scheduleId)) throw new ApiError('ScheduleNotFound', { details: { scheduleId: row.scheduleId } })
    if (row.actions.filter((a) => a.type === 'clip').length > 1) throw invalidParam('/actions', 'at most one clip action')
    for (const [index, action] of row.actions.entries()) await this.#checkAction(index, action, cameraId)
  }

  /**
   * A recognition condition reads what one stream task's recognition says of its objects: it
   * needs that task (taskId) with taskConfig.recognition, and watch-list galleries it searches.
   */
  #checkRecognition({ taskId, recognition }: PolicyConditions): void {
    if (!recognition) return
    const unavailable = (field: string, reason: string) =>
      new ApiError('AlarmConditionUnavailable', { details: { field, reason }, msgText: `Condition ${field}: ${reason}.` })
    if (recognition.seen === 'stranger' && recognition.galleryIds)
      throw invalidParam('/conditions/recognition/galleryIds', 'only for seen "watchList": a stranger is a face that matched nobody in the task\'s galleries')
    if (taskId === undefined) throw unavailable('/conditions/taskId', 'a recognition condition needs the taskId of a stream task with taskConfig.recognition')
    const config = (this.#streamTasks().status(taskId).taskConfig as TaskConfig).recognition
    if (!config) throw unavailable('/conditions/recognition', `stream task ${taskId} does not recognize faces: set its taskConfig.recognition (Task/update) first`)
    const searched = config.galleryIds ?? []
    const never = searched.length === 0 ? [] : (recognition.galleryIds ?? []).filter((id) => !searched.includes(id))
    if (never.length > 0) throw unavailable('/conditions/recognition/galleryIds', `stream task ${taskId} searches only ${searched.join(', ')}, never ${never.join(', ')}`)
  }

  async #checkAction(index: number, action: PolicyAction, cameraId: string | undefined): Promise<void> {
    if (action.type === 'webhook') {
      const url = URL.canParse(action.url) ? new URL(action.url) : null
      if (!url || !['http:', 'https:'].includes(url.protocol)) throw invalidParam(`/actions/${index}/url`, 'must be an http:// or https:// URL')
      // fetch refuses them, and a URL is shown back: a receiver authenticates the signature (secret) instead.
      if (url.username || url.password) throw invalidParam(`/actions/${index}/url`, 'must not hold a user name or password: set a secret, receivers check the signature')
    } else if (action.type === 'clip') {
      const recorder = this.options.recorder()
      if (!recorder)
        throw new ApiError('AlarmActionUnavailable', { details: { index, action: 'clip', reason: 'this device has no recording service that records clips for alarms' }, msgText: `Action ${index} (clip): this device records no clips for alarms; remove the action.` })
      // A policy for one camera can be checked now; for other policies each alarm's camera is (alarm.actionFailed).
      if (cameraId !== undefined && !recorder.records(cameraId))
        throw new ApiError('AlarmActionUnavailable', { details: { index, action: 'clip', cameraId, reason: 'the camera does not record: set its recording mode to events or continuous (SetRecordParam)' }, msgText: `Action ${index} (clip): camera ${cameraId} does not record; set its recording mode to events or continuous first.` })
    } else if (action.type === 'audio') {
      await this.options.audio().fileOf(action.audioId)
      const columns = await this.options.audio().columns({ pageNum: 1, pageSize: 100_000 })
      if (!columns.rows.some((c) => c.columnId === action.columnId)) throw new ApiError('AudioColumnNotFound', { details: { index, columnId: action.columnId } })
    }
  }
}

/** An update's webhook action without `secret` keeps the secret the same URL had. */
function keepSecrets(actions: PolicyAction[], old: PolicyAction[]): PolicyAction[] {
  return actions.map((a) => {
    if (a.type !== 'webhook' || a.secret !== undefined) return a
    const before = old.find((o): o is Extract<PolicyAction, { type: 'webhook' }> => o.type === 'webhook' && o.url === a.url)
    return before?.secret ? { ...a, secret: before.secret } : a
  })
}
