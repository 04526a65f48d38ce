import { Type, type Static } from '@sinclair/typebox'
import type { Identity } from '../handler.ts'
import type { TaskConfig } from '../tasks/types.ts'
import { PageNumber, PageSize } from '../http/paging.ts'
import { CLIP_LIMITS, POLICY_LIMITS } from './limits.ts'

export { ACTION_DELIVERY, CLIP_LIMITS, POLICY_LIMITS } from './limits.ts'

/**
 * Linkage / alarm policies (spec 4.10 `/gtw/cwai/AlarmStrage/`): conditions on the objects a
 * stream task tracks → actions. Every alarm is an `alarm.raised` event with its snapshot (kept
 * with the event history); the actions add a webhook, an MQTT message, a clip, a sound.
 * `ctx.alarms`; runtime/alarms/.
 */

export const PolicyId = Type.String({ minLength: 1, maxLength: 64, description: 'The id `add` answered.' })
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 128, description })

/**
 * Who a stream task's recognition saw (docs/alarms-and-schedules.md "Alarm policies"): `watchList` — a person of the
 * named galleries (any of the task's when absent) at or above the task's threshold; `stranger`
 * — a face was seen and described but matched nobody. An object whose face was not seen yet is
 * neither.
 */
export const RecognitionConditionSchema = Type.Object({
  seen: Type.Union([Type.Literal('watchList'), Type.Literal('stranger')], { description: '"watchList": a person of the galleries was recognized; "stranger": a face matched nobody.' }),
  galleryIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1, maxItems: 32, uniqueItems: true, description: 'watchList only: the person must be of one of these face galleries (among those the task searches); absent: any.',
  })),
}, { additionalProperties: false, description: 'Only objects the task\'s recognition named (taskConfig.recognition; needs taskId).' })
export type RecognitionCondition = Static<typeof RecognitionConditionSchema>

export const PolicyConditionsSchema = Type.Object({
  taskId: Type.Optional(Id('Only this stream task\'s objects.')),
  cameraId: Type.Optional(Id('Only objects of tasks on this camera.')),
  areaId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only objects inside this region (taskConfig.regions areaId; the box centre decides).' })),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only objects with this label (e.g. person).' })),
  minCount: Type.Optional(Type.Integer({ minimum: 1, maximum: POLICY_LIMITS.maxCount, default: 1, description: '1: one alarm per object; more: one alarm when at least this many objects meet the conditions at once.' })),
  minDwellS: Type.Optional(Type.Number({ minimum: 0, maximum: POLICY_LIMITS.maxDwellS, default: 0, description: 'Seconds an object must have met the other conditions (in the region) first.' })),
  logicResult: Type.Optional(Type.Boolean({ description: 'true: only objects whose pipeline logic node answered true (bLogicResult, spec 2.6).' })),
  recognition: Type.Optional(RecognitionConditionSchema),
}, { additionalProperties: false })
export type PolicyConditions = Static<typeof PolicyConditionsSchema>

const WebhookAction = Type.Object({
  type: Type.Literal('webhook'),
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http:// or https:// URL the alarm event is POSTed to (docs/events.md "Webhook" format).' }),
  secret: Type.Optional(Type.String({ maxLength: 256, description: 'Signs each delivery (X-Event-Signature). Never returned; omitted on update: kept for the same URL; "": none.' })),
}, { additionalProperties: false })
const MqttAction = Type.Object({
  type: Type.Literal('mqtt'),
  topic: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^+#$\\u0000][^+#\\u0000]*$', description: 'Topic the alarm event is published to (QoS 1) on the device\'s broker connection; no wildcards.' }),
}, { additionalProperties: false })
const ClipAction = Type.Object({
  type: Type.Literal('clip'),
  preRollS: Type.Optional(Type.Integer({ minimum: 0, maximum: CLIP_LIMITS.maxPreRollS, default: CLIP_LIMITS.defaultPreRollS })),
  postRollS: Type.Optional(Type.Integer({ minimum: 0, maximum: CLIP_LIMITS.maxPostRollS, default: CLIP_LIMITS.defaultPostRollS })),
}, { additionalProperties: false })
const AudioAction = Type.Object({
  type: Type.Literal('audio'),
  columnId: Id('An audio column (Audio/AddAudioColumn).'),
  audioId: Id('An audio file (Audio/AddAudioFile).'),
}, { additionalProperties: false })
const ACTION_SCHEMAS = { webhook: WebhookAction, mqtt: MqttAction, clip: ClipAction, audio: AudioAction }
export type PolicyAction = Static<typeof WebhookAction> | Static<typeof MqttAction> | Static<typeof ClipAction> | Static<typeof AudioAction>
/**
 * One action, chosen by `type` (if/then rather than a union, so that a bad field is reported
 * against the schema of its own type).
 */
export const PolicyActionSchema = Type.Unsafe<PolicyAction>({
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', enum: Object.keys(ACTION_SCHEMAS) } },
  allOf: Object.entries(ACTION_SCHEMAS).map(([type, schema]) => ({ if: { properties: { type: { const: type } }, required: ['type'] }, then: schema })),
  description: '`{type: "webhook", url, secret?}` · `{type: "mqtt", topic}` · `{type: "clip", preRollS?, postRollS?}` · `{type: "audio", columnId, audioId}`.',
})

const Name = Type.String({ minLength: 1, maxLength: 64 })
const Actions = Type.Array(PolicyActionSchema, { maxItems: POLICY_LIMITS.actions, description: 'What an alarm does besides being recorded (alarm.raised with its snapshot).' })
const ScheduleRef = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], { description: 'The policy fires only while this schedule is on; null: always.' })
const Cooldown = Type.Integer({ minimum: 0, maximum: POLICY_LIMITS.maxCooldownS, default: POLICY_LIMITS.defaultCooldownS, description: 'Seconds after an alarm during which the same object (or, with minCount > 1, the policy) raises none.' })

export const AddPolicyInput = Type.Object({
  policyName: Name,
  enabled: Type.Optional(Type.Boolean({ default: true })),
  conditions: PolicyConditionsSchema,
  scheduleId: Type.Optional(ScheduleRef),
  cooldownS: Type.Optional(Cooldown),
  actions: Type.Optional(Actions),
}, { additionalProperties: false })
export type AddPolicyInput = Static<typeof AddPolicyInput>

export const UpdatePolicyInput = Type.Object({
  policyId: PolicyId,
  policyName: Type.Optional(Name),
  enabled: Type.Optional(Type.Boolean()),
  conditions: Type.Optional(PolicyConditionsSchema),
  scheduleId: Type.Optional(ScheduleRef),
  cooldownS: Type.Optional(Cooldown),
  actions: Type.Optional(Actions),
}, { additionalProperties: false })
export type UpdatePolicyInput = Static<typeof UpdatePolicyInput>

export const PagePoliciesInput = Type.Object({
  pageNum: PageNumber(),
  pageSize: PageSize(20, 500),
  policyName: Type.Optional(Type.String({ maxLength: 64, description: 'Substring of the name.' })),
  taskId: Type.Optional(Type.String({ maxLength: 128 })),
  cameraId: Type.Optional(Type.String({ maxLength: 128 })),
}, { additionalProperties: false })
export type PagePoliciesInput = Static<typeof PagePoliciesInput>

export const PolicyIdInput = Type.Object({ policyId: PolicyId }, { additionalProperties: false })
export const SwitchPolicyInput = Type.Object({
  policyIds: Type.Array(PolicyId, { minItems: 1, maxItems: 500, uniqueItems: true }),
  enabled: Type.Boolean(),
}, { additionalProperties: false })

/** An action as answered: a webhook's secret only as `secretSet`. */
export type PolicyActionView = Exclude<PolicyAction, { type: 'webhook' }> | { type: 'webhook'; url: string; secretSet: boolean }

export interface PolicyView {
  policyId: string
  policyName: string
  enabled: boolean
  conditions: PolicyConditions
  scheduleId: string | null
  cooldownS: number
  actions: PolicyActionView[]
  createdAt: string
  updateTime: string
}

export interface AlarmPoliciesService {
  add(input: AddPolicyInput, identity: Identity): Promise<{ policyId: string }>
  update(input: UpdatePolicyInput): Promise<PolicyView>
  remove(policyId: string): Promise<void>
  page(query: PagePoliciesInput): Promise<{ total: number; rows: PolicyView[] }>
  get(policyId: string): Promise<PolicyView>
  /** Switches policies on or off without deleting them; AlarmPolicyNotFound names the unknown ones (nothing changes). */
  setEnabled(policyIds: string[], enabled: boolean): Promise<PolicyView[]>
  /** The JPEG file of an alarm's snapshot (AlarmPictureNotFound), kept as long as alarm events are. */
  picture(alarmId: string): Promise<string>
  /**
   * Before Task/update: RegionInUse when `taskConfig` would remove a region that policies watching
   * stream task `taskId` need (no task they watch would define it any more).
   */
  checkTaskRegions(taskId: string, taskConfig: TaskConfig): void
}

/** The route serving alarm snapshots, and the file name of an alarm's picture. */
export const ALARM_PICTURE_ROUTE = '/gtw/cwai/Event/AlarmPicture'
export const ALARM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
