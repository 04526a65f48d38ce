import { readFileSync } from 'node:fs'
import path from 'node:path'
import mqtt from 'mqtt'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { startBroker, type Broker } from '../helpers/mosquitto.ts'
import { recordTopics, type Recorder, type Received } from '../helpers/mqtt-client.ts'
import { until } from '../helpers/processes.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { checkDiscoveryConfig, jsonField, renderCommand } from '../helpers/ha-schema.ts'

const root = path.resolve(import.meta.dirname, '../..')
// CI runs in a fresh clone with the shared folder beside it.
const VIDEO = path.resolve(root, '../shared/media/one-by-one-person-detection.mp4')
/**
 * The first visit of the footage (test/streams/stream-tasks.e2e.test.ts counted them on its
 * frames): a person walks in at 5 s and has left at 19 s; nobody before, the next at 21 s.
 */
const FIRST_VISIT: [number, number] = [5, 19]
const CLIENT_ID = 'ha-test-device'
const HA = 'homeassistant'
const NODE = CLIENT_ID
const COUNTER = { counterId: 'exit', counterName: 'Exit', from: { xRatio: 0.7, yRatio: 1 }, to: { xRatio: 0.7, yRatio: 0 } }

describe('Home Assistant MQTT discovery against mosquitto (docs/events.md "Home Assistant MQTT discovery")', () => {
  let broker: Broker
  let device: DeviceProcess
  let mtk: string
  let ha: Recorder
  let cameraId: string
  let policyId: string
  const env = () => ({ MQTT_URL: broker.url, MQTT_CLIENT_ID: CLIENT_ID, MQTT_HA_REFRESH_MS: '500', MQTT_HA_IMAGE_INTERVAL_MS: '1000', MQTT_SUMMARY_INTERVAL_MS: '1000', EVENT_POLL_MS: '100' })
  const ok = async (route: string, body: unknown) => {
    const answer = await device.post(route, body, mtk)
    expect(answer.body.resMsg, route).toEqual([])
    return answer.body.resData
  }
  /** The retained config of each topic as a new subscriber gets it now (empty payloads: none). */
  const retainedConfigs = async () => {
    const reader = await recordTopics(broker.url, `${HA}/+/${NODE}/+/config`)
    // The broker sends retained messages right after the subscription; a marker published after them arrives last.
    await reader.client.subscribeAsync('marker/ha-test', { qos: 1 })
    await reader.client.publishAsync('marker/ha-test', 'end', { qos: 1 })
    await reader.waitFor((m) => m.topic === 'marker/ha-test')
    await reader.close()
    return new Map(reader.messages.filter((m) => m.retain && m.topic !== 'marker/ha-test' && m.body !== '').map((m) => [m.topic, m.body as Record<string, unknown>]))
  }
  const latest = (topic: string, from = 0): Received | undefined => ha.messages.slice(from).filter((m) => m.topic === topic).at(-1)

  beforeAll(async () => {
    broker = await startBroker()
    ha = await recordTopics(broker.url, '#')
    device = await startDevice({ env: env() })
    mtk = await device.adminToken()
    const uploadId = await uploadFile(device, mtk, readFileSync(VIDEO), 'one-by-one.mp4', 'video')
    cameraId = (await ok('/gtw/cwai/Camera/add', { cameraName: 'office', sourceType: 'file', uploadId })).cameraId
    policyId = (await ok('/gtw/cwai/AlarmStrage/add', { policyName: 'visitor', conditions: { cameraId, label: 'person' }, cooldownS: 600 })).policyId
  }, 120_000)
  afterAll(async () => {
    await ha?.close()
    await device?.stop()
    device?.cleanup()
    await broker?.cleanup()
  })

  it('a person walking through the footage turns the task\'s person binary sensor on, and off once they left', { timeout: 120_000 }, async () => {
    const from = ha.messages.length
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'visits', algorithmCode: 'person-detector', cameraId, targetFps: 5, taskConfig: { counters: [COUNTER] } })
    const created = Date.now()
    const config = await ha.waitFor((m) => m.topic === `${HA}/binary_sensor/${NODE}/task_visits_person/config` && m.body !== '')
    const { config: sensor } = checkDiscoveryConfig(config.topic, config.body)
    const state = sensor.state_topic as string
    // OFF before anyone walks in, ON while the first visitor is tracked, OFF again after they left.
    const off = await ha.waitFor((m) => m.topic === state && m.body === 'OFF')
    expect(ha.messages.indexOf(off)).toBeGreaterThanOrEqual(from)
    const on = await ha.waitFor((m) => m.topic === state && m.body === 'ON' && ha.messages.indexOf(m) > ha.messages.indexOf(off), 40_000)
    const onAt = (Date.now() - created) / 1000
    await ha.waitFor((m) => m.topic === state && m.body === 'OFF' && ha.messages.indexOf(m) > ha.messages.indexOf(on), 40_000)
    const offAt = (Date.now() - created) / 1000
    expect(onAt).toBeGreaterThanOrEqual(FIRST_VISIT[0])
    expect(onAt).toBeLessThanOrEqual(FIRST_VISIT[1])
    expect(offAt).toBeGreaterThanOrEqual(FIRST_VISIT[1] - 2)
    expect(offAt).toBeLessThanOrEqual(FIRST_VISIT[1] + 12)
    // The alarm policy raised one alarm for that visitor: the event entity got it, with the policy, the label and the picture.
    const alarm = await ha.waitFor((m) => m.topic === `cwai/${CLIENT_ID}/ha/task/visits/alarm`, 20_000)
    expect(alarm.body).toMatchObject({ event_type: 'policy', policyId, policyName: 'visitor', label: 'person', cameraId })
    expect(alarm.body.pictureUrl).toMatch(/^http:\/\/.+\/gtw\/cwai\/Event\/AlarmPicture\?id=/)
    expect(alarm.retain).toBe(false)
    // The device's fleet summary (docs/deployment.md "Fleet view") counts it and carries its thumbnail inline.
    const summary = await ha.waitFor((m) => m.topic === `cwai/${CLIENT_ID}/summary` && m.body.latestAlarms?.length === 1, 20_000)
    expect(summary.body).toMatchObject({ alarmsLastHour: 1, cameras: { total: 1, online: 1 }, tasks: { total: 1, running: 1 } })
    expect(summary.body.latestAlarms[0]).toMatchObject({ alarmId: alarm.body.alarmId, policyName: 'visitor', label: 'person', taskId: 'visits', cameraId })
    const thumbnail = await sharp(Buffer.from(summary.body.latestAlarms[0].thumbnail.replace(/^data:image\/jpeg;base64,/, ''), 'base64')).metadata()
    expect(thumbnail).toMatchObject({ format: 'jpeg', width: 160 })
  })

  it('every config follows Home Assistant\'s schema for its component, with topics that carry payloads in the documented format', { timeout: 60_000 }, async () => {
    const configs = await until(async () => {
      const now = await retainedConfigs()
      return now.size >= 4 + 1 + 1 + 1 + 2 + 2 + 1 + 1 ? now : null
    }, 'the retained configs', 20_000)
    const components: Record<string, string[]> = {}
    const uniqueIds = new Set<string>()
    for (const [topic, payload] of configs) {
      const { component, config } = checkDiscoveryConfig(topic, payload)
      ;(components[component] ??= []).push(topic.split('/')[3]!)
      uniqueIds.add(config.unique_id)
      // One HA device for the edge device: its id, its version, its console.
      const registration = latest(`cwai/${CLIENT_ID}/registration`)!.body
      expect(config.device).toMatchObject({ identifiers: [CLIENT_ID], sw_version: registration.softwareVersion, configuration_url: `${registration.http.urls[0]}/console/` })
      // Availability: the device's retained status (its last will), online now.
      expect(config.availability).toEqual([{ topic: `cwai/${CLIENT_ID}/status`, value_template: '{{ value_json.state }}', payload_available: 'online', payload_not_available: 'offline' }])
      const status = latest(`cwai/${CLIENT_ID}/status`)
      expect(status?.body.state).toBe('online')
      // The state topic holds a payload the config reads.
      if (component === 'camera') continue
      if (component === 'event') {
        expect(config.event_types).toEqual(['policy', 'logic'])
        continue
      }
      const stateTopic = config.state_topic as string
      const state = latest(stateTopic)
      expect(state, `${topic}: nothing on ${stateTopic}`).toBeDefined()
      const field = jsonField(config.value_template)
      const value = field ? state!.body[field] : state!.body
      if (component === 'binary_sensor') expect(['ON', 'OFF'], topic).toContain(value)
      if (component === 'switch') expect([config.payload_on, config.payload_off], topic).toContain(String(value))
      if (component === 'sensor' && config.device_class === 'enum') expect(config.options, topic).toContain(value)
      else if (component === 'sensor') expect(typeof value, topic).toBe('number')
    }
    expect(uniqueIds.size).toBe(configs.size)
    expect(components).toEqual({
      sensor: expect.arrayContaining(['health_cpu', 'health_memory', 'health_disk_free', 'task_visits_fps', 'task_visits_state', 'task_visits_counter_exit_in', 'task_visits_counter_exit_out']),
      binary_sensor: expect.arrayContaining(['health_sidecar', 'task_visits_person']),
      camera: [`camera_${cameraId}`],
      event: ['task_visits_alarm'],
      switch: expect.arrayContaining(['task_visits_enabled', `policy_${policyId}_enabled`]),
    })
    // The counter sensors show the crossings of the device's own history (passengerFlow.counted): by
    // then only the first visitor, who crosses the line walking in, nobody out (a crossing in the
    // visitor's last second can be missed when the machine is loaded, hence at most one).
    const crossings = (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 500, kinds: ['passengerFlow.counted'], taskId: 'visits' })).rows
    const expected = { in: crossings.filter((e: any) => e.payload.in === 1).length, out: crossings.filter((e: any) => e.payload.out === 1).length }
    expect(expected.in).toBeLessThanOrEqual(1)
    expect(expected.out).toBe(0)
    await ha.waitFor((m) => m.topic === `cwai/${CLIENT_ID}/ha/task/visits/counter/exit` && m.body.in === expected.in && m.body.out === expected.out, 10_000)
    // The camera's image topic carries a JPEG of the camera's size.
    const camera = checkDiscoveryConfig(`${HA}/camera/${NODE}/camera_${cameraId}/config`, configs.get(`${HA}/camera/${NODE}/camera_${cameraId}/config`)!).config
    const client = await mqtt.connectAsync(broker.url)
    const image = await new Promise<Buffer>((resolve) => {
      client.on('message', (_topic, payload) => resolve(payload))
      void client.subscribeAsync(camera.topic)
    })
    await client.endAsync()
    expect([...image.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff])
  })

  it('the switches run Task/switch and AlarmStrage/switch through the MQTT request transport', { timeout: 60_000 }, async () => {
    const configs = await retainedConfigs()
    const task = checkDiscoveryConfig(`${HA}/switch/${NODE}/task_visits_enabled/config`, configs.get(`${HA}/switch/${NODE}/task_visits_enabled/config`)!).config
    expect(task.command_topic).toBe(`cwai/${CLIENT_ID}/request`)
    const from = ha.messages.length
    await ha.client.publishAsync(task.command_topic, renderCommand(task.command_template, task.payload_off), { qos: 1 })
    const answer = await ha.waitFor((m) => m.topic === `cwai/${CLIENT_ID}/response` && ha.messages.indexOf(m) >= from)
    expect(answer.body).toMatchObject({ path: '/gtw/cwai/Task/switch', status: 200, envelope: { resCode: 1 } })
    expect((await ok('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'visits' })).state).toBe('disabled')
    await ha.waitFor((m) => m.topic === task.state_topic && m.body.enabled === 'false' && m.body.state === 'disabled' && ha.messages.indexOf(m) >= from)

    const policy = checkDiscoveryConfig(`${HA}/switch/${NODE}/policy_${policyId}_enabled/config`, configs.get(`${HA}/switch/${NODE}/policy_${policyId}_enabled/config`)!).config
    await ha.client.publishAsync(policy.command_topic, renderCommand(policy.command_template, policy.payload_off), { qos: 1 })
    await ha.waitFor((m) => m.topic === policy.state_topic && m.body === false && ha.messages.indexOf(m) >= from)
    expect((await ok('/gtw/cwai/AlarmStrage/detail', { policyId })).enabled).toBe(false)
    // A malformed command (a template rendered with a bad value) is refused by the transport and changes nothing.
    const bad = ha.messages.length
    await ha.client.publishAsync(task.command_topic, renderCommand(task.command_template, 'maybe'), { qos: 1 })
    const refused = await ha.waitFor((m) => m.topic === `cwai/${CLIENT_ID}/response` && ha.messages.indexOf(m) >= bad)
    expect(refused.body).toMatchObject({ requestId: null, status: 200, envelope: { resCode: 0, resMsg: [{ messageKey: 'api.error.InvalidParam' }] } })
    expect((await ok('/v1/cwai/aihost/QueryTaskStatus', { taskId: 'visits' })).state).toBe('disabled')
  })

  it('renames update, deletes clear (empty retained payload), restart keeps unique ids and clears what the broker kept of deleted entities; HA\'s birth message republishes', { timeout: 90_000 }, async () => {
    const before = await retainedConfigs()
    const cameraTopic = `${HA}/camera/${NODE}/camera_${cameraId}/config`
    await ok('/gtw/cwai/Camera/update', { cameraId, cameraName: 'lobby' })
    await ha.waitFor((m) => m.topic === cameraTopic && m.body?.name === 'lobby')

    // Stopped cleanly: the device's status says offline, and with it every entity's availability.
    await device.stop()
    expect(latest(`cwai/${CLIENT_ID}/status`)?.body.state).toBe('offline')
    // Meanwhile a config of an entity the device no longer has is left on the broker.
    const stale = `${HA}/sensor/${NODE}/task_gone_fps/config`
    await ha.client.publishAsync(stale, JSON.stringify({ ...before.get(`${HA}/sensor/${NODE}/task_visits_fps/config`), uniq_id: `${NODE}_task_gone_fps` }), { qos: 1, retain: true })
    device = await startDevice({ dataDir: device.dataDir, env: env() })
    mtk = await device.adminToken()
    const after = await until(async () => {
      const now = await retainedConfigs()
      return !now.has(stale) && now.size === before.size ? now : null
    }, 'the configs after the restart', 30_000)
    const ids = (configs: Map<string, Record<string, unknown>>) => [...configs.values()].map((c) => c.uniq_id).sort()
    expect(ids(after)).toEqual(ids(before))
    expect(after.get(cameraTopic)?.name).toBe('lobby')

    // Home Assistant restarts: its birth message makes the device publish every config again.
    // Without it nothing is republished: four refresh periods (MQTT_HA_REFRESH_MS) pass quietly first.
    const republished = (from: number) => ha.messages.slice(from).filter((m) => m.topic.endsWith('/config') && m.body !== '' && !m.retain)
    // The device's own start publishes its configs too (a live subscriber sees them unretained): let that end first.
    for (let seen = -1, rounds = 0; seen !== ha.messages.length && rounds < 30; rounds++) {
      seen = ha.messages.length
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
    const quiet = ha.messages.length
    await new Promise((resolve) => setTimeout(resolve, 4 * 500))
    expect(republished(quiet)).toEqual([])
    const from = ha.messages.length
    await ha.client.publishAsync(`${HA}/status`, 'online', { qos: 1 })
    await until(async () => republished(from).length >= before.size && true, 'the republished configs', 20_000)
    expect(new Set(republished(from).map((m) => m.topic))).toEqual(new Set(after.keys()))

    // Deleting the task and the policy removes their entities; the camera's goes with the camera.
    await ok('/v1/cwai/aihost/TaskCancle', { taskId: 'visits' })
    await ok('/gtw/cwai/AlarmStrage/delete', { policyId })
    await ok('/gtw/cwai/Camera/delete', { cameraId })
    const left = await until(async () => {
      const now = await retainedConfigs()
      return [...now.keys()].every((t) => /\/health_[a-z_]+\/config$/.test(t)) ? now : null
    }, 'only the device health configs', 20_000)
    expect([...left.keys()].map((t) => t.split('/')[3]).sort()).toEqual(['health_cpu', 'health_disk_free', 'health_memory', 'health_sidecar'])
    expect(ha.messages.some((m) => m.topic === cameraTopic && m.body === '' && m.retain === false)).toBe(true)

    // A prefix with a wildcard or a leading slash is refused and changes nothing.
    for (const haDiscoveryPrefix of ['home/#', '/homeassistant', 'home assistant']) {
      const refused = await device.post('/gtw/cwai/System/SetMqttParam', { haDiscoveryPrefix }, mtk)
      expect(refused.body.resMsg[0], haDiscoveryPrefix).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: expect.stringContaining('haDiscoveryPrefix') } })
    }
    expect(await ok('/gtw/cwai/System/QueryMqttParam', {})).toMatchObject({ haDiscovery: true, haDiscoveryPrefix: HA })
    // Switched off: every config of the device is cleared from the broker; the event channel goes on.
    expect(await ok('/gtw/cwai/System/SetMqttParam', { haDiscovery: false })).toMatchObject({ haDiscovery: false })
    await until(async () => (await retainedConfigs()).size === 0, 'no config left', 20_000)
    expect((await ok('/gtw/cwai/System/QueryEventChannelStatus', {})).mqtt.state).toBe('registered')
  })
})
