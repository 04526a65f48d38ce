import { createHash } from 'node:crypto'

/**
 * Home Assistant MQTT discovery (docs/events.md "Home Assistant MQTT discovery"): the retained
 * configs that make the device's cameras, stream tasks, alarm policies and health appear in
 * Home Assistant, following its documented schema
 * (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery): one config per entity on
 * `<discovery prefix>/<component>/<node id>/<object id>/config`, abbreviated keys from its
 * abbreviation table, one HA device per edge device, availability from the device's status
 * topic (its last will). Pure: the runtime part (runtime/events/ha-discovery.ts) publishes.
 */

export type HaComponent = 'camera' | 'binary_sensor' | 'event' | 'sensor' | 'switch'

export interface HaCamera { cameraId: string; cameraName: string }
export interface HaTask {
  taskId: string
  cameraId: string
  cameraName: string | null
  /** The labels the task's algorithm reports (and any seen since the start). */
  labels: string[]
  counters: { counterId: string; counterName: string }[]
}
export interface HaPolicy { policyId: string; policyName: string }

export interface HaDeviceFacts {
  /** The device's MQTT topic prefix and client id (docs/events.md "MQTT"). */
  topicPrefix: string
  clientId: string
  discoveryPrefix: string
  softwareVersion: string
  /** The console's address (`<http url>/console/`), or null before the HTTP server listens. */
  configurationUrl: string | null
}

export interface HaInventory { cameras: HaCamera[]; tasks: HaTask[]; policies: HaPolicy[] }

export interface HaConfig {
  component: HaComponent
  /** `<discovery prefix>/<component>/<node id>/<object id>/config`. */
  topic: string
  /** Stable across restarts: derived from the client id and the ids of the camera, task, label, policy. */
  uniqueId: string
  payload: Record<string, unknown>
}

/**
 * An id as a topic level and discovery object id: HA allows `[a-zA-Z0-9_-]` there; anything
 * else becomes `_` and a short hash of the original keeps two ids apart.
 */
export function haKey(id: string): string {
  const clean = id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)
  return clean === id ? id : `${clean}_${createHash('sha256').update(id).digest('hex').slice(0, 8)}`
}

/** Where the device publishes the states the configs point at. */
export const haTopics = (topicPrefix: string, clientId: string) => {
  const base = `${topicPrefix}/${clientId}`
  return {
    /** The device's retained `{"state":"online"|"offline"}` (its last will): every entity's availability. */
    status: `${base}/status`,
    /** The MQTT request transport (spec 5.6): where the switches send their requests. */
    request: `${base}/request`,
    health: `${base}/ha/health`,
    cameraImage: (cameraId: string) => `${base}/ha/camera/${haKey(cameraId)}/image`,
    taskState: (taskId: string) => `${base}/ha/task/${haKey(taskId)}/state`,
    taskObject: (taskId: string, label: string) => `${base}/ha/task/${haKey(taskId)}/object/${haKey(label)}`,
    taskAlarm: (taskId: string) => `${base}/ha/task/${haKey(taskId)}/alarm`,
    taskCounter: (taskId: string, counterId: string) => `${base}/ha/task/${haKey(taskId)}/counter/${haKey(counterId)}`,
    policyState: (policyId: string) => `${base}/ha/policy/${haKey(policyId)}/state`,
  }
}

/** The stream task states (shared/streams/types.ts), the options of the task state sensor. */
export const HA_TASK_STATES = ['running', 'idle', 'waiting', 'disabled']
/** The `event_type` values of the alarm event entity: `alarmType` of alarm.raised. */
export const HA_ALARM_EVENT_TYPES = ['policy', 'logic']

/**
 * A switch's command: a request of the MQTT request transport (spec 5.6), rendered by HA's
 * `command_template` with `value` = `payload_on` (`true`) or `payload_off` (`false`).
 */
const switchCommand = (path: string, body: string) =>
  `{"requestId":"ha-{{ now().timestamp() }}","path":"${path}","body":${body}}`

/** Every discovery config of the device, in a stable order. */
export function haDiscoveryConfigs(device: HaDeviceFacts, inventory: HaInventory): HaConfig[] {
  const node = haKey(device.clientId)
  const topics = haTopics(device.topicPrefix, device.clientId)
  const dev = {
    ids: [device.clientId],
    name: device.clientId,
    mf: 'cwai',
    mdl: 'cwai edge AI device',
    sw: device.softwareVersion,
    ...(device.configurationUrl ? { cu: device.configurationUrl } : {}),
  }
  const common = {
    dev,
    origin: { name: 'cwai', sw: device.softwareVersion },
    avty: [{ t: topics.status, val_tpl: '{{ value_json.state }}', pl_avail: 'online', pl_not_avail: 'offline' }],
  }
  const configs: HaConfig[] = []
  const add = (component: HaComponent, object: string, payload: Record<string, unknown>) => {
    const uniqueId = `${node}_${object}`
    configs.push({ component, uniqueId, topic: `${device.discoveryPrefix}/${component}/${node}/${object}/config`, payload: { ...payload, uniq_id: uniqueId, ...common } })
  }

  // Device health.
  add('sensor', 'health_cpu', { name: 'CPU load (1 min)', stat_t: topics.health, val_tpl: '{{ value_json.cpuLoad1m }}', stat_cla: 'measurement', ent_cat: 'diagnostic', ic: 'mdi:cpu-64-bit' })
  add('sensor', 'health_memory', { name: 'Memory used', stat_t: topics.health, val_tpl: '{{ value_json.memoryUsedPercent }}', unit_of_meas: '%', stat_cla: 'measurement', ent_cat: 'diagnostic' })
  add('sensor', 'health_disk_free', { name: 'Disk free', stat_t: topics.health, val_tpl: '{{ value_json.diskAvailableBytes }}', dev_cla: 'data_size', unit_of_meas: 'B', stat_cla: 'measurement', ent_cat: 'diagnostic' })
  add('binary_sensor', 'health_sidecar', { name: 'Inference sidecar', stat_t: topics.health, val_tpl: '{{ value_json.sidecar }}', dev_cla: 'running', ent_cat: 'diagnostic' })

  for (const camera of inventory.cameras) {
    const key = haKey(camera.cameraId)
    add('camera', `camera_${key}`, { name: camera.cameraName, t: topics.cameraImage(camera.cameraId) })
  }
  for (const task of inventory.tasks) {
    const key = haKey(task.taskId)
    const where = task.cameraName ? `${task.cameraName} ${task.taskId}` : task.taskId
    for (const label of task.labels)
      add('binary_sensor', `task_${key}_${haKey(label)}`, {
        name: `${where} ${label}`, stat_t: topics.taskObject(task.taskId, label), pl_on: 'ON', pl_off: 'OFF', dev_cla: label === 'person' ? 'occupancy' : 'presence',
      })
    add('event', `task_${key}_alarm`, { name: `${where} alarm`, stat_t: topics.taskAlarm(task.taskId), event_types: HA_ALARM_EVENT_TYPES, ic: 'mdi:alarm-light' })
    add('sensor', `task_${key}_fps`, { name: `${where} analysed fps`, stat_t: topics.taskState(task.taskId), val_tpl: '{{ value_json.processedFps }}', unit_of_meas: 'fps', stat_cla: 'measurement', ent_cat: 'diagnostic' })
    add('sensor', `task_${key}_state`, { name: `${where} state`, stat_t: topics.taskState(task.taskId), val_tpl: '{{ value_json.state }}', dev_cla: 'enum', ops: HA_TASK_STATES, ent_cat: 'diagnostic' })
    for (const counter of task.counters) {
      const counterKey = `task_${key}_counter_${haKey(counter.counterId)}`
      for (const direction of ['in', 'out'] as const)
        add('sensor', `${counterKey}_${direction}`, { name: `${where} ${counter.counterName} ${direction}`, stat_t: topics.taskCounter(task.taskId, counter.counterId), val_tpl: `{{ value_json.${direction} }}`, stat_cla: 'total_increasing', ic: 'mdi:account-multiple' })
    }
    add('switch', `task_${key}_enabled`, {
      name: `${where} analysis`, stat_t: topics.taskState(task.taskId), val_tpl: '{{ value_json.enabled }}', cmd_t: topics.request,
      cmd_tpl: switchCommand('/gtw/cwai/Task/switch', `{"taskId":${JSON.stringify(task.taskId)},"enabled":{{ value }}}`), pl_on: 'true', pl_off: 'false', ent_cat: 'config',
    })
  }
  for (const policy of inventory.policies) {
    const key = haKey(policy.policyId)
    add('switch', `policy_${key}_enabled`, {
      name: `Alarm policy ${policy.policyName}`, stat_t: topics.policyState(policy.policyId), cmd_t: topics.request,
      cmd_tpl: switchCommand('/gtw/cwai/AlarmStrage/switch', `{"policyIds":[${JSON.stringify(policy.policyId)}],"enabled":{{ value }}}`), pl_on: 'true', pl_off: 'false', ent_cat: 'config',
    })
  }
  return configs
}
