import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'

const root = path.resolve(import.meta.dirname, '../..')
const packageVersion = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version

test.describe('AI-host routes without the sidecar, on the real runtime', () => {
  let device: DeviceProcess
  let mtk: string
  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
  })

  const call = (route: string, body: unknown = {}, headers: Record<string, string> = {}) => device.post(route, body, mtk, headers)
  const firstError = (body: any) => body.resMsg[0]

  test('lists the AI-host routes it mounts, every one but Probe behind mtk', async () => {
    const { body } = await call('/v1/cwai/aihost/ViewRoutes')
    const paths = body.resData.rows.map((r: any) => r.path)
    const mine = ['InterfaceTest', 'TaskCreate', 'TaskCancle', 'Info', 'Probe', 'ViewRoutes', 'GraphicsMemory', 'LogicTest', 'QueryDeviceMemStatus', 'QueryLogs']
    for (const name of mine) expect(paths).toContain(`/v1/cwai/aihost/${name}`)
    for (const name of mine.filter((n) => n !== 'Probe')) {
      const unauthenticated = await device.post(`/v1/cwai/aihost/${name}`, {})
      expect(unauthenticated.status, name).toBe(401)
      expect(firstError(unauthenticated.body).messageKey).toBe('api.error.Unauthorized')
    }
  })

  test('ViewRoutes lists exactly what is mounted: every bundle route plus the tus endpoint, marked as such', async () => {
    const { body } = await call('/v1/cwai/aihost/ViewRoutes')
    const bundleRoutes = Object.keys(JSON.parse(readFileSync(path.join(root, 'dist/functions/manifest.json'), 'utf8')).routes)
    const tusPath = '/gtw/cwai/atomic/model/tus'
    expect(body.resData.rows.map((r: any) => r.path).sort()).toEqual([...bundleRoutes, tusPath].sort())
    expect(body.resData.total).toBe(bundleRoutes.length + 1)
    expect(body.resData.rows.filter((r: any) => 'protocol' in r)).toEqual([{
      path: tusPath, methods: ['OPTIONS', 'HEAD', 'GET', 'POST', 'PATCH', 'DELETE'], authenticated: true, auth: 'mtk', body: 'tus', protocol: 'tus',
      summary: 'tus 1.0.0 resumable upload endpoint (creation, termination, expiration, checksum); uploads live under this path.',
    }])
    // It is really mounted: the tus discovery answer, and mtk required like the rest.
    const options = await fetch(`${device.url}${tusPath}`, { method: 'OPTIONS' })
    expect(options.status).toBe(204)
    expect(options.headers.get('tus-version')).toBe('1.0.0')
    const anonymous = await fetch(`${device.url}${tusPath}`, { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '1' } })
    expect(anonymous.status).toBe(401)
  })

  test('InterfaceTest echoes the text with the running version; a non-string echo is InvalidParam', async () => {
    const ok = await call('/v1/cwai/aihost/InterfaceTest', { echo: 'hello device' }, { 'x-request-id': 'it-echo-1' })
    expect(ok.body).toMatchObject({ resCode: 1, resData: { echo: 'hello device', softwareVersion: packageVersion, apiVersion: 'v1', accountName: 'admin', requestId: 'it-echo-1' } })
    const bad = await call('/v1/cwai/aihost/InterfaceTest', { echo: 42 })
    expect(bad.body.resCode).toBe(0)
    expect(firstError(bad.body)).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/echo' } })
    const extra = await call('/v1/cwai/aihost/InterfaceTest', { echo: 'x', other: 1 })
    expect(firstError(extra.body)).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/other' } })
    const tooLong = await call('/v1/cwai/aihost/InterfaceTest', { echo: 'x'.repeat(4097) })
    expect(firstError(tooLong.body)).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/echo' } })
  })

  test('Info reports version, build hash and uptime; inventory it does not know is null, not invented', async () => {
    const { body } = await call('/v1/cwai/aihost/Info')
    const buildHash = JSON.parse(readFileSync(path.join(root, 'dist/build-info.json'), 'utf8')).hash
    expect(body.resCode).toBe(1)
    expect(body.resData).toMatchObject({ softwareVersion: packageVersion, buildHash, nodeVersion: process.version })
    expect(Number.isInteger(body.resData.uptimeSeconds)).toBe(true)
    expect(body.resData.uptimeSeconds).toBeGreaterThanOrEqual(0)
    expect(Array.isArray(body.resData.models)).toBe(true)
    const bad = await call('/v1/cwai/aihost/Info', { verbose: true })
    expect(firstError(bad.body)).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/verbose' } })
  })

  test('QueryDeviceMemStatus reads system memory from /proc and the runtime process', async () => {
    const { body } = await call('/v1/cwai/aihost/QueryDeviceMemStatus')
    const memTotal = Number(/^MemTotal:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024
    expect(body.resData.system.totalBytes).toBe(memTotal)
    expect(body.resData.system.availableBytes).toBeLessThanOrEqual(memTotal)
    expect(body.resData.runtime.pid).toBe(device.process.pid)
    expect(body.resData.runtime.rssBytes).toBeGreaterThan(body.resData.runtime.heapUsedBytes)
    const bad = await call('/v1/cwai/aihost/QueryDeviceMemStatus', { pid: 1 })
    expect(firstError(bad.body).messageKey).toBe('api.error.InvalidParam')
  })

  test('GraphicsMemory says explicitly that this device has no accelerator', async () => {
    const { body } = await call('/v1/cwai/aihost/GraphicsMemory')
    expect(body.resData).toMatchObject({ accelerators: [], cpuOnly: true })
    expect(body.resData.executionProviders).toContain('cpu')
    expect(body.resData.note).toMatch(/CPU/)
  })

  test('TaskCreate needs an existing camera and TaskCancle a created stream task (stream tasks: test/streams)', async () => {
    const created = await call('/v1/cwai/aihost/TaskCreate', { taskId: 't1', algorithmCode: 'person-detector', cameraId: 'no-such-camera', targetFps: 5 })
    expect(created.status).toBe(200)
    expect(firstError(created.body)).toMatchObject({ messageKey: 'api.error.CameraNotFound', details: { cameraId: 'no-such-camera' } })
    const cancelled = await call('/v1/cwai/aihost/TaskCancle', { taskId: 't1' })
    expect(firstError(cancelled.body)).toMatchObject({ messageKey: 'api.error.NotCreated', details: { taskId: 't1' } })
  })

  test('LogicTest tells which targets meet label, confidence, size and region clauses', async () => {
    const targetList = [
      { box: { x: 10, y: 10, width: 50, height: 50 }, confidence: [{ label: 'face', confidence: 0.9 }] },
      { box: { x: 900, y: 10, width: 50, height: 50 }, confidence: [{ label: 'face', confidence: 0.95 }] },
      { box: { x: 10, y: 10, width: 50, height: 50 }, confidence: [{ label: 'face', confidence: 0.4 }] },
      { box: { x: 10, y: 10, width: 5, height: 5 }, confidence: [{ label: 'face', confidence: 0.99 }] },
      { box: { x: 10, y: 10, width: 50, height: 50 }, confidence: [{ label: 'person', confidence: 0.99 }] },
    ]
    const leftHalf = [{ xRatio: 0, yRatio: 0 }, { xRatio: 0.5, yRatio: 0 }, { xRatio: 0.5, yRatio: 1 }, { xRatio: 0, yRatio: 1 }]
    const { body } = await call('/v1/cwai/aihost/LogicTest', {
      logic: { condition: { label: 'face', minConfidence: 0.5, minBoxWidth: 20, minBoxHeight: 20, region: leftHalf }, minTargets: 1 },
      targetList,
      imageWidth: 1000,
      imageHeight: 500,
    })
    expect(body.resCode).toBe(1)
    expect(body.resData).toMatchObject({ bDetected: true, metCount: 1, total: 5, metIndexes: [0] })
    expect(body.resData.targets.map((t: any) => t.failed)).toEqual([[], ['region'], ['confidence'], ['size'], ['label']])
    expect(body.resData.targets[0].matched).toEqual({ label: 'face', confidence: 0.9 })

    // The manifest's logic node format ({label, minConfidence}, minTargets) works unchanged.
    const count = await call('/v1/cwai/aihost/LogicTest', { logic: { condition: { label: 'face', minConfidence: 0.5 }, minTargets: 3 }, targetList })
    expect(count.body.resData).toMatchObject({ bDetected: true, metCount: 3, metIndexes: [0, 1, 3] })
    const capped = await call('/v1/cwai/aihost/LogicTest', { logic: { condition: { labels: ['face', 'person'] }, maxTargets: 2 }, targetList })
    expect(capped.body.resData).toMatchObject({ bDetected: false, metCount: 5 })
  })

  test('LogicTest refuses malformed conditions with the field named', async () => {
    const targetList = [{ box: { x: 0, y: 0, width: 1, height: 1 }, confidence: [] }]
    const cases: [unknown, string][] = [
      [{ logic: { condition: { label: 'face', minConfidence: 1.5 } }, targetList }, '/logic/condition/minConfidence'],
      [{ logic: { condition: { label: 'face', minConfidence: 0.8, maxConfidence: 0.2 } }, targetList }, '/logic/condition/maxConfidence'],
      [{ logic: { condition: { label: 'face', region: [{ xRatio: 0, yRatio: 0 }, { xRatio: 1, yRatio: 0 }, { xRatio: 1, yRatio: 1 }] } }, targetList }, '/imageWidth'],
      [{ logic: { condition: { label: 'face' }, minTargets: 3, maxTargets: 1 }, targetList }, '/logic/maxTargets'],
      [{ logic: { condition: { label: 'face', when: 'always' } }, targetList }, '/logic/condition/when'],
      [{ logic: { condition: { label: 'face' } } }, '/targetList'],
      [{ logic: { condition: { label: 'face' } }, targetList: [{ box: { x: 0, y: 0 }, confidence: [] }] }, '/targetList/0/box/width'],
    ]
    for (const [input, field] of cases) {
      const { body } = await call('/v1/cwai/aihost/LogicTest', input)
      expect(body.resCode, field).toBe(0)
      expect(firstError(body), field).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field } })
    }
  })

  test('QueryLogs finds a request by id, filters by level, time and text, and pages newest first', async () => {
    const requestId = `logs-${Date.now()}`
    for (let i = 0; i < 3; i++) await call('/v1/cwai/aihost/InterfaceTest', { echo: String(i) }, { 'x-request-id': requestId })
    // The file destination is asynchronous: wait until the three access lines are on disk.
    let page: any
    for (let attempt = 0; attempt < 50; attempt++) {
      page = (await call('/v1/cwai/aihost/QueryLogs', { requestId })).body.resData
      if (page.total >= 3) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(page.total).toBe(3)
    expect(page.rows.every((r: any) => r.requestId === requestId && r.path === '/v1/cwai/aihost/InterfaceTest' && r.msg === 'request')).toBe(true)
    expect(page.rows[0].time).toBeGreaterThanOrEqual(page.rows[2].time)
    expect(page.files).toBeGreaterThanOrEqual(1)

    const paged = (await call('/v1/cwai/aihost/QueryLogs', { requestId, pageNo: 2, pageSize: 2 })).body.resData
    expect(paged).toMatchObject({ total: 3, pageNo: 2, pageSize: 2 })
    expect(paged.rows).toHaveLength(1)
    expect(paged.rows[0].time).toBe(page.rows[2].time)

    const warnOnly = (await call('/v1/cwai/aihost/QueryLogs', { requestId, level: 'warn' })).body.resData
    expect(warnOnly.total).toBe(0)
    const future = (await call('/v1/cwai/aihost/QueryLogs', { requestId, startTime: String(Date.now() + 3_600_000) })).body.resData
    expect(future.total).toBe(0)
    const text = (await call('/v1/cwai/aihost/QueryLogs', { text: requestId.toUpperCase() })).body.resData
    expect(text.total).toBe(3)
    const secrets = (await call('/v1/cwai/aihost/QueryLogs', { text: mtk })).body.resData
    expect(secrets.total).toBe(0)
  })

  test('QueryLogs refuses bad filters', async () => {
    const cases: [unknown, string][] = [
      [{ level: 'loud' }, '/level'],
      [{ startTime: 'yesterday' }, '/startTime'],
      [{ startTime: 2000, endTime: 1000 }, '/endTime'],
      [{ pageSize: 0 }, '/pageSize'],
      [{ pageSize: 501 }, '/pageSize'],
      [{ pageNo: 0 }, '/pageNo'],
    ]
    for (const [input, field] of cases) {
      const { body } = await call('/v1/cwai/aihost/QueryLogs', input)
      expect(firstError(body), field).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field } })
    }
  })

  test('QueryDeviceStatus gives the boot ids of the device and of the OS, the running version, storage and CPU load', async () => {
    const { status, body } = await call('/gtw/cwai/System/QueryDeviceStatus')
    expect(status).toBe(200)
    expect(body.resData).toMatchObject({
      // spec 4.11: this start's boot of the device (an unsupervised device makes its own), on this OS boot.
      bootId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      osBootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      softwareVersion: packageVersion,
      supervised: false,
      pendingUpgrade: null,
      lastUpgrade: null,
      sidecar: { state: 'running' },
    })
    expect(body.resData.storage.path).toBe(device.dataDir)
    expect(Number(body.resData.storage.totalBytes)).toBeGreaterThan(0)
    expect(body.resData.cpu.cores).toBeGreaterThanOrEqual(1)
    expect(typeof body.resData.cpu.loadAverage1m).toBe('number')
    const unauthenticated = await device.post('/gtw/cwai/System/QueryDeviceStatus', {})
    expect(unauthenticated.status).toBe(401)
  })

  test('QueryDeviceStatus, UpgradeStatus and ViewRoutes take {} or no body and refuse unknown fields, like the other routes', async () => {
    for (const route of ['/gtw/cwai/System/QueryDeviceStatus', '/gtw/cwai/System/UpgradeStatus', '/v1/cwai/aihost/ViewRoutes']) {
      expect((await call(route, {})).body.resCode, route).toBe(1)
      expect((await call(route, '')).body.resCode, route).toBe(1)
      const extra = await call(route, { verbose: true })
      expect(extra.body, route).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.InvalidParam', details: { field: '/verbose' } }] })
    }
  })
})
