import { describe, expect, it } from 'vitest'
import { haDiscoveryConfigs, haKey } from '../../runtime/events/ha-configs.ts'
import { checkDiscoveryConfig } from '../helpers/ha-schema.ts'

const device = { topicPrefix: 'cwai', clientId: 'cam.east', discoveryPrefix: 'homeassistant', softwareVersion: '1.2.3', configurationUrl: 'http://192.0.2.10:8080' }
const inventory = {
  cameras: [{ cameraId: 'c1', cameraName: 'office' }, { cameraId: 'gate/1', cameraName: 'gate' }],
  tasks: [
    { taskId: 'door', cameraId: 'c1', cameraName: 'office', labels: ['person', 'car'], counters: [{ counterId: 'exit', counterName: 'Exit' }] },
    { taskId: 'door+1', cameraId: 'gate/1', cameraName: null, labels: ['person'], counters: [] },
  ],
  policies: [{ policyId: 'p1', policyName: 'visitor' }],
}

describe('Home Assistant discovery configs (runtime/events/ha-configs.ts)', () => {
  it('keeps ids of [a-zA-Z0-9_-] and makes others safe and distinct', () => {
    expect(haKey('door_1-A')).toBe('door_1-A')
    expect(haKey('door+1')).toMatch(/^door_1_[0-9a-f]{8}$/)
    expect(haKey('door/1')).toMatch(/^door_1_[0-9a-f]{8}$/)
    expect(haKey('door+1')).not.toBe(haKey('door/1'))
    expect(haKey('door+1')).toBe(haKey('door+1'))
  })

  it('answers one valid config per entity, with unique ids that depend on the ids only', () => {
    const configs = haDiscoveryConfigs(device, inventory)
    for (const c of configs) expect(() => checkDiscoveryConfig(c.topic, c.payload)).not.toThrow()
    // 4 health + 2 cameras + task door: 2 labels, alarm, fps, state, 2 counter sensors, switch + task door+1: 1 label, alarm, fps, state, switch + 1 policy switch.
    expect(configs).toHaveLength(4 + 2 + (2 + 1 + 2 + 2 + 1) + (1 + 1 + 2 + 1) + 1)
    expect(new Set(configs.map((c) => c.uniqueId)).size).toBe(configs.length)
    expect(new Set(configs.map((c) => c.topic)).size).toBe(configs.length)
    // The node id: the client id made safe (a dot is not allowed there).
    expect(configs.every((c) => c.topic.split('/')[2] === haKey('cam.east'))).toBe(true)
    // A rename or a new version changes names and the device block, never a unique id or a topic.
    const renamed = haDiscoveryConfigs({ ...device, softwareVersion: '2.0.0' }, { ...inventory, cameras: [{ cameraId: 'c1', cameraName: 'lobby' }, inventory.cameras[1]!] })
    expect(renamed.map((c) => [c.topic, c.uniqueId])).toEqual(configs.map((c) => [c.topic, c.uniqueId]))
  })

  it('a switch command is a request of the MQTT request transport once HA renders it', () => {
    const configs = haDiscoveryConfigs(device, inventory)
    const task = configs.find((c) => c.uniqueId.endsWith('_task_door_enabled'))!.payload
    expect(task.cmd_t).toBe('cwai/cam.east/request')
    const rendered = String(task.cmd_tpl).replace('{{ now().timestamp() }}', '1795312835.12').replace('{{ value }}', String(task.pl_off))
    expect(JSON.parse(rendered)).toEqual({ requestId: 'ha-1795312835.12', path: '/gtw/cwai/Task/switch', body: { taskId: 'door', enabled: false } })
    const policy = configs.find((c) => c.uniqueId.endsWith('_policy_p1_enabled'))!.payload
    const on = String(policy.cmd_tpl).replace('{{ now().timestamp() }}', '1').replace('{{ value }}', String(policy.pl_on))
    expect(JSON.parse(on)).toEqual({ requestId: 'ha-1', path: '/gtw/cwai/AlarmStrage/switch', body: { policyIds: ['p1'], enabled: true } })
  })

  it('without a console address the device block has no configuration URL', () => {
    const [first] = haDiscoveryConfigs({ ...device, configurationUrl: null }, inventory)
    expect(first!.payload.dev).toEqual({ ids: ['cam.east'], name: 'cam.east', mf: 'cwai', mdl: 'cwai edge AI device', sw: '1.2.3' })
  })
})
