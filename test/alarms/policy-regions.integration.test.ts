import path from 'node:path'
import { createClient } from '@libsql/client'
import { expect } from 'vitest'
import { footageApi, type FootageApi } from '../helpers/cameras.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { PERSON_VIDEO } from '../helpers/video.ts'

const square = (x: number) => [{ xRatio: x, yRatio: 0 }, { xRatio: x + 0.3, yRatio: 0 }, { xRatio: x + 0.3, yRatio: 1 }, { xRatio: x, yRatio: 1 }]
const REGIONS = [{ areaId: 'door', areaName: 'Door', polygon: square(0.1) }, { areaId: 'window', polygon: square(0.6) }]

// docs/alarms-and-schedules.md "Alarm policies": a policy's areaId is a region of the tasks it watches.
test.describe('an alarm policy\'s region must be one its tasks define (real runtime, RTSP camera)', () => {
  let api: FootageApi
  test.afterAll(async () => {
    await api?.stopCameras()
  })

  test('known regions are accepted; an unknown one is refused naming the known ones, and nothing is stored', { timeout: 120_000 }, async ({ device, mtk }) => {
    api = footageApi(device, mtk, PERSON_VIDEO)
    const cameraId = await api.addCamera('office')
    await api.ok('/v1/cwai/aihost/TaskCreate', { taskId: 'zones', algorithmCode: 'person-detector', cameraId, targetFps: 1, taskConfig: { regions: REGIONS } })
    await api.ok('/v1/cwai/aihost/TaskCreate', { taskId: 'whole', algorithmCode: 'person-detector', cameraId, targetFps: 1 })
    const policyRows = async () => {
      const db = createClient({ url: `file:${path.join(device.dataDir, 'device.db')}` })
      try {
        return (await db.execute('SELECT policy_name, conditions FROM alarm_policies ORDER BY policy_name')).rows.map((r) => [r[0], JSON.parse(String(r[1])).areaId ?? null])
      } finally {
        db.close()
      }
    }

    const { policyId } = await api.ok('/gtw/cwai/AlarmStrage/add', { policyName: 'at the door', conditions: { taskId: 'zones', areaId: 'door', label: 'person' } })
    // A task without regions has the default area "0" (the whole picture); on a camera, its tasks' regions together.
    await api.ok('/gtw/cwai/AlarmStrage/add', { policyName: 'anywhere', conditions: { taskId: 'whole', areaId: '0' } })
    const { policyId: cameraPolicyId } = await api.ok('/gtw/cwai/AlarmStrage/add', { policyName: 'camera window', conditions: { cameraId, areaId: 'window' } })

    const refused = await api.post('/gtw/cwai/AlarmStrage/add', { policyName: 'hall', conditions: { taskId: 'zones', areaId: 'hall', label: 'person' } })
    expect(refused.status).toBe(200)
    expect(refused.body.resCode).toBe(0)
    expect(refused.body.resMsg).toEqual([expect.objectContaining({
      messageKey: 'api.error.UnknownRegion', msgCode: '7616', recommendedAction: 'CHECK_REQUEST_PARAMETERS', retryable: false,
      details: { field: '/conditions/areaId', areaId: 'hall', knownAreaIds: ['door', 'window'], taskId: 'zones' },
      msgText: 'Region "hall" is not defined by stream task zones; known regions: door, window.',
    })])
    // On the camera: both tasks' regions; on a task without regions: the default area only.
    expect((await api.post('/gtw/cwai/AlarmStrage/add', { policyName: 'hall', conditions: { cameraId, areaId: 'hall' } })).body.resMsg[0])
      .toMatchObject({ messageKey: 'api.error.UnknownRegion', details: { areaId: 'hall', knownAreaIds: ['door', 'window', '0'], cameraId } })
    expect((await api.post('/gtw/cwai/AlarmStrage/add', { policyName: 'hall', conditions: { taskId: 'whole', areaId: 'door' } })).body.resMsg[0])
      .toMatchObject({ messageKey: 'api.error.UnknownRegion', details: { areaId: 'door', knownAreaIds: ['0'], taskId: 'whole' } })

    // An update to an unknown region is refused and the policy keeps its region.
    const update = await api.post('/gtw/cwai/AlarmStrage/update', { policyId, conditions: { taskId: 'zones', areaId: 'Door' } })
    expect(update.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.UnknownRegion', details: { areaId: 'Door', knownAreaIds: ['door', 'window'] } })
    expect((await api.ok('/gtw/cwai/AlarmStrage/detail', { policyId })).conditions).toEqual({ taskId: 'zones', areaId: 'door', label: 'person', minCount: 1, minDwellS: 0 })
    await api.ok('/gtw/cwai/AlarmStrage/update', { policyId, conditions: { taskId: 'zones', areaId: 'window' } })

    const page = await api.ok('/gtw/cwai/AlarmStrage/page', { pageNum: 1, pageSize: 100 })
    expect(page.rows.map((r: any) => [r.policyName, r.conditions.areaId]).sort()).toEqual([['anywhere', '0'], ['at the door', 'window'], ['camera window', 'window']])
    expect(await policyRows()).toEqual([['anywhere', '0'], ['at the door', 'window'], ['camera window', 'window']])

    // A Task/update taking away a watched region is refused naming the policies; the task keeps its regions.
    const regionsOf = async (taskId: string) => (await api.ok('/v1/cwai/aihost/QueryTaskStatus', { taskId })).taskConfig.regions ?? []
    const withoutWindow = await api.post('/gtw/cwai/Task/update', { taskId: 'zones', taskConfig: { regions: [REGIONS[0]] } })
    expect(withoutWindow.body.resCode).toBe(0)
    expect(withoutWindow.body.resMsg).toEqual([expect.objectContaining({
      messageKey: 'api.error.RegionInUse', msgCode: '7617', recommendedAction: 'NONE', retryable: false,
      details: {
        taskId: 'zones', areaIds: ['window'],
        policies: [{ policyId, policyName: 'at the door', areaId: 'window' }, { policyId: cameraPolicyId, policyName: 'camera window', areaId: 'window' }],
      },
    })])
    expect((await regionsOf('zones')).map((r: { areaId: string }) => r.areaId)).toEqual(['door', 'window'])
    // The default area of a task without regions is watched too ("anywhere" on task whole).
    const wholeDrawn = await api.post('/gtw/cwai/Task/update', { taskId: 'whole', taskConfig: { regions: [{ areaId: 'desk', polygon: square(0.3) }] } })
    expect(wholeDrawn.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.RegionInUse', details: { taskId: 'whole', areaIds: ['0'], policies: [{ policyName: 'anywhere', areaId: '0' }] } })
    expect(await regionsOf('whole')).toEqual([])
    // Removing an unwatched region, or adding one, is accepted.
    await api.ok('/gtw/cwai/Task/update', { taskId: 'zones', taskConfig: { regions: [REGIONS[1], { areaId: 'hall', polygon: square(0.3) }] } })
    expect((await regionsOf('zones')).map((r: { areaId: string }) => r.areaId)).toEqual(['window', 'hall'])
  })
})
