import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'

const root = path.resolve(import.meta.dirname, '../..')
const sample1 = readFileSync(path.join(root, 'node_modules/@vladmandic/face-api/demo/sample1.jpg'))
/** The shipped manifest is the source of truth for the default threshold. */
const faceDefaultThreshold: number = JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')).nodes[0].scoreThreshold

test.describe('AI-host task routes with the real sidecar', () => {
  let device: DeviceProcess
  let mtk: string
  const call = (route: string, body: unknown = {}, headers: Record<string, string> = {}) => device.post(`/v1/cwai/aihost/${route}`, body, mtk, headers)
  const firstError = (body: any) => body.resMsg[0]
  const sidecarPid = () => [...device.logs].reverse().find((l) => l.msg === 'inference sidecar ready')?.pid as number

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    const created = await call('PTaskCreate', { taskId: 'aihost-task', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })
    expect(created.body.resCode).toBe(1)
  })

  test('mounts all 19 AI-host routes (spec 4.9), the task list, and the 3 compatibility routes', async () => {
    const { body } = await call('ViewRoutes')
    const paths: string[] = body.resData.rows.map((r: any) => r.path)
    const aihost = paths.filter((p) => p.startsWith('/v1/cwai/aihost/')).map((p) => p.slice('/v1/cwai/aihost/'.length)).sort()
    expect(aihost).toEqual(['GraphicsMemory', 'Info', 'InterfaceTest', 'LoadLocalAlgorithmAction', 'LogicTest', 'OperateNode', 'OverviewStructrueRecord', 'PTaskCancle',
      'PTaskCreate', 'PTaskDetectPic', 'Probe', 'QueryDeviceMemStatus', 'QueryLogs', 'QueryTaskInfo', 'QueryTaskList', 'QueryTaskOverviewFile', 'QueryTaskStatus', 'TaskCancle', 'TaskCreate', 'ViewRoutes'])
    expect(paths.filter((p) => p.startsWith('/gtw/cwai/aihost/')).sort()).toEqual(['/gtw/cwai/aihost/PTaskCancle', '/gtw/cwai/aihost/PTaskCreate', '/gtw/cwai/aihost/PTaskDetectPic'])
  })

  test('lists created tasks newest change first with their status and creator, cancelled ones on request, paged', async () => {
    for (const taskId of ['list-a', 'list-b']) {
      expect((await call('PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })).body.resCode).toBe(1)
    }
    expect((await call('PTaskCancle', { taskId: 'list-b', algorithmCode: 'face-detection' })).body.resCode).toBe(1)
    const created = (await call('QueryTaskList')).body.resData
    expect(created).toMatchObject({ total: 2, pageNum: 1, pageSize: 50 })
    expect(created.rows.map((r: any) => r.taskId)).toEqual(['list-a', 'aihost-task'])
    expect(created.rows[0]).toMatchObject({ algorithmCode: 'face-detection', state: 'created', loaded: true, detections: 0, createdByAccount: 'admin' })
    expect(created.rows[0].createdBy).toMatch(/^[0-9a-f-]{36}$/)
    const cancelled = (await call('QueryTaskList', { state: 'cancelled' })).body.resData
    expect(cancelled.rows.map((r: any) => [r.taskId, r.state])).toEqual([['list-b', 'cancelled']])
    const paged = (await call('QueryTaskList', { pageNum: 2, pageSize: 1 })).body.resData
    expect(paged).toMatchObject({ total: 2, pageNum: 2, pageSize: 1 })
    expect(paged.rows.map((r: any) => r.taskId)).toEqual(['aihost-task'])
    expect(firstError((await call('QueryTaskList', { state: 'deleted' })).body)).toMatchObject({ messageKey: 'api.error.InvalidParam' })
    expect((await call('PTaskCancle', { taskId: 'list-a', algorithmCode: 'face-detection' })).body.resCode).toBe(1)
  })

  test('reports the running sidecar, its memory, the CPU provider and the pipeline inventory', async () => {
    const info = (await call('Info')).body.resData
    expect(info.executionProviders).toEqual(['cpu'])
    expect(info.sidecar).toMatchObject({ state: 'running', pid: sidecarPid() })
    expect(info.pipelines.map((p: any) => p.algorithmId)).toContain('face-detection')
    expect(info.pipelines.find((p: any) => p.algorithmId === 'face-detection').models).toEqual(['blazeface-back'])
    expect(info.loadedModels).toContainEqual({ model: 'blazeface-back', refs: 1 })
    const memory = (await call('QueryDeviceMemStatus')).body.resData
    expect(memory.sidecar.pid).toBe(sidecarPid())
    expect(memory.sidecar.rssBytes).toBeGreaterThan(0)
    const status = (await device.post('/gtw/cwai/System/QueryDeviceStatus', {}, mtk)).body.resData
    expect(status.sidecar).toMatchObject({ state: 'running', pid: sidecarPid() })
  })

  test('has no overview picture before the first detection', async () => {
    const { body } = await call('QueryTaskOverviewFile', { taskId: 'aihost-task' })
    expect(firstError(body)).toMatchObject({ messageKey: 'api.error.OverviewNotFound', details: { taskId: 'aihost-task' } })
  })

  test('counts detections, keeps stage timings and streams the latest annotated picture', async () => {
    const before = (await call('QueryTaskStatus', { taskId: 'aihost-task' })).body.resData
    expect(before).toMatchObject({ taskId: 'aihost-task', algorithmCode: 'face-detection', state: 'created', loaded: true, detections: 0, running: 0, lastError: null })
    for (let i = 0; i < 2; i++) {
      const detected = await call('PTaskDetectPic', { taskId: 'aihost-task', algorithmCode: 'face-detection', imageBase64: sample1.toString('base64') })
      expect(detected.body.resCode).toBe(1)
    }
    const status = (await call('QueryTaskStatus', { taskId: 'aihost-task' })).body.resData
    expect(status).toMatchObject({ detections: 2, failures: 0, running: 0, lastError: null })
    const info = (await call('QueryTaskInfo', { taskId: 'aihost-task' })).body.resData
    expect(info).toMatchObject({ detections: 2, overviewAvailable: true, algorithm: { algorithmId: 'face-detection', nodes: [{ id: 'face', action: 'detector' }] } })
    expect(Object.keys(info.lastTimings).length).toBeGreaterThan(0)
    for (const value of Object.values(info.lastTimings)) expect(typeof value).toBe('number')

    const picture = await fetch(`${device.url}/v1/cwai/aihost/QueryTaskOverviewFile`, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body: JSON.stringify({ taskId: 'aihost-task' }) })
    expect(picture.status).toBe(200)
    expect(picture.headers.get('content-type')).toBe('image/jpeg')
    const bytes = Buffer.from(await picture.arrayBuffer())
    expect(bytes.subarray(0, 3).toString('hex')).toBe('ffd8ff')
    const head = await fetch(`${device.url}/v1/cwai/aihost/QueryTaskOverviewFile`, { method: 'POST', headers: { 'content-type': 'application/json', mtk, range: 'bytes=0-1' }, body: JSON.stringify({ taskId: 'aihost-task' }) })
    expect(head.status).toBe(206)
    expect(head.headers.get('content-range')).toBe(`bytes 0-1/${bytes.length}`)
    expect(Buffer.from(await head.arrayBuffer()).toString('hex')).toBe('ffd8')
  })

  test('records a failed detection as the task\'s last error', async () => {
    const failed = await call('PTaskDetectPic', { taskId: 'aihost-task', algorithmCode: 'face-detection', imageBase64: Buffer.from('not an image at all').toString('base64') })
    expect(failed.body.resCode).toBe(0)
    const status = (await call('QueryTaskStatus', { taskId: 'aihost-task' })).body.resData
    expect(status.failures).toBe(1)
    expect(status.lastError.messageKey).toBe(firstError(failed.body).messageKey)
  })

  test('shows the pipeline as nodes and edges, for a task or an algorithm', async () => {
    const graph = (await call('OverviewStructrueRecord', { taskId: 'aihost-task' })).body.resData
    expect(graph.nodes.map((n: any) => [n.id, n.action])).toEqual([['image', 'input'], ['face', 'detector'], ['result', 'output']])
    expect(graph.edges).toEqual([{ from: 'image', to: 'face' }, { from: 'face', to: 'result' }])
    expect(graph.nodes[1]).toMatchObject({ model: 'blazeface-back', scoreThreshold: faceDefaultThreshold, defaultScoreThreshold: faceDefaultThreshold, labels: ['face'], enabled: true })
    const byAlgorithm = (await call('OverviewStructrueRecord', { algorithmCode: 'face-presence' })).body.resData
    expect(byAlgorithm.nodes.map((n: any) => n.action)).toContain('logic')
    const logicId = byAlgorithm.nodes.find((n: any) => n.action === 'logic').id
    expect(byAlgorithm.edges).toContainEqual({ from: logicId, to: 'result' })

    const cases: [unknown, string][] = [[{}, 'api.error.InvalidParam'], [{ taskId: 'aihost-task', algorithmCode: 'face-detection' }, 'api.error.InvalidParam'],
      [{ algorithmCode: 'no-such-algorithm' }, 'api.error.ActionAlgLoadFailed'], [{ taskId: 'no-such-task' }, 'api.error.NotCreated']]
    for (const [input, key] of cases) expect(firstError((await call('OverviewStructrueRecord', input)).body).messageKey, JSON.stringify(input)).toBe(key)
  })

  test('OperateNode re-parameterizes a node of the running task and refuses what the pipeline cannot do', async () => {
    const changed = await call('OperateNode', { taskId: 'aihost-task', nodeId: 'face', operation: 'configure', params: { scoreThreshold: 0.9 } })
    expect(changed.body).toMatchObject({ resCode: 1, resData: { taskId: 'aihost-task', nodeId: 'face', scoreThreshold: 0.9 } })
    const graph = (await call('OverviewStructrueRecord', { taskId: 'aihost-task' })).body.resData
    expect(graph.nodes[1]).toMatchObject({ scoreThreshold: 0.9, defaultScoreThreshold: faceDefaultThreshold })
    const info = (await call('QueryTaskInfo', { taskId: 'aihost-task' })).body.resData
    expect(info.taskConfig).toMatchObject({ thresholds: { face: 0.9 } })
    expect((await call('PTaskDetectPic', { taskId: 'aihost-task', algorithmCode: 'face-detection', imageBase64: sample1.toString('base64') })).body.resCode).toBe(1)

    const cases: [unknown, string, Record<string, unknown>?][] = [
      [{ taskId: 'aihost-task', nodeId: 'nope', operation: 'configure', params: { scoreThreshold: 0.5 } }, 'api.error.InvalidParam', { field: '/nodeId' }],
      [{ taskId: 'aihost-task', nodeId: 'face', operation: 'configure', params: { scoreThreshold: 1.5 } }, 'api.error.InvalidParam', { field: '/params/scoreThreshold' }],
      [{ taskId: 'aihost-task', nodeId: 'face', operation: 'configure', params: {} }, 'api.error.InvalidParam', { field: '/params' }],
      [{ taskId: 'aihost-task', nodeId: 'face', operation: 'explode' }, 'api.error.InvalidParam', { field: '/operation' }],
      [{ taskId: 'aihost-task', nodeId: 'face', operation: 'disable' }, 'api.error.InvalidParam', { field: '/nodeId', nodeId: 'face' }],
      [{ taskId: 'aihost-task', nodeId: 'face', operation: 'enable', params: { scoreThreshold: 0.5 } }, 'api.error.InvalidParam', { field: '/params' }],
      [{ taskId: 'no-such-task', nodeId: 'face', operation: 'configure', params: { scoreThreshold: 0.5 } }, 'api.error.NotCreated'],
    ]
    for (const [input, key, details] of cases) {
      const item = firstError((await call('OperateNode', input)).body)
      expect(item.messageKey, JSON.stringify(input)).toBe(key)
      if (details) expect(item.details, JSON.stringify(input)).toMatchObject(details)
    }
    const after = (await call('QueryTaskInfo', { taskId: 'aihost-task' })).body.resData
    expect(after.taskConfig).toMatchObject({ thresholds: { face: 0.9 } })
  })

  test('OperateNode disables and enables a node of the running task', async () => {
    const create = await call('PTaskCreate', { taskId: 'presence', algorithmCode: 'face-presence', algorithmUpdateTime: String(Date.now()) })
    expect(create.body.resCode).toBe(1)
    const detect = async () => (await call('PTaskDetectPic', { taskId: 'presence', algorithmCode: 'face-presence', imageBase64: sample1.toString('base64') })).body.resData
    const faces = (resData: any) => resData.areaList.flatMap((a: any) => a.targetList)
    const withLogic = await detect()
    expect(faces(withLogic).length).toBeGreaterThan(0)
    expect(faces(withLogic).every((t: any) => t.bLogicResult === true)).toBe(true)
    expect(withLogic.areaList[0].bDetected).toBe(true)

    const disabled = await call('OperateNode', { taskId: 'presence', nodeId: 'alarm', operation: 'disable' })
    expect(disabled.body).toMatchObject({ resCode: 1, resData: { taskId: 'presence', nodeId: 'alarm', operation: 'disable', enabled: false } })
    const graph = (await call('OverviewStructrueRecord', { taskId: 'presence' })).body.resData
    expect(graph.nodes.find((n: any) => n.id === 'alarm')).toMatchObject({ enabled: false })
    expect(graph.nodes.find((n: any) => n.id === 'face')).toMatchObject({ enabled: true })
    // spec 2.6: without a (running) logic node there is no bLogicResult and no area trigger.
    const without = await detect()
    expect(faces(without).length).toBe(faces(withLogic).length)
    expect(faces(without).some((t: any) => 'bLogicResult' in t)).toBe(false)
    expect(without.areaList[0].bDetected).toBe(false)
    expect((await call('QueryTaskInfo', { taskId: 'presence' })).body.resData.taskConfig).toMatchObject({ disabledNodes: ['alarm'] })

    expect((await call('OperateNode', { taskId: 'presence', nodeId: 'alarm', operation: 'enable' })).body.resData).toMatchObject({ enabled: true })
    expect(faces(await detect()).every((t: any) => t.bLogicResult === true)).toBe(true)
    // Through PTaskCreate too: an unknown node or the result detector is refused.
    for (const disabledNodes of [['nope'], ['face']]) {
      const refused = await call('PTaskCreate', { taskId: 'presence', algorithmCode: 'face-presence', algorithmUpdateTime: String(Date.now()), taskConfig: { disabledNodes } })
      expect(firstError(refused.body), disabledNodes[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/taskConfig/disabledNodes', nodeId: disabledNodes[0] } })
    }
    expect((await call('PTaskCancle', { taskId: 'presence', algorithmCode: 'face-presence' })).body.resCode).toBe(1)
  })

  test('taskConfig.detectorInputSize: the person detector at 320, a size it does not offer refused (docs/detection.md "Detector input size")', async () => {
    const create = (taskConfig: unknown) => call('PTaskCreate', { taskId: 'small-persons', algorithmCode: 'person-detector', algorithmUpdateTime: String(Date.now()), taskConfig })
    expect((await create({ detectorInputSize: 320 })).body.resCode).toBe(1)
    expect((await call('QueryTaskInfo', { taskId: 'small-persons' })).body.resData.taskConfig).toMatchObject({ detectorInputSize: 320 })
    const detected = await call('PTaskDetectPic', { taskId: 'small-persons', algorithmCode: 'person-detector', imageBase64: sample1.toString('base64') })
    // sample1.jpg: three people, all found at 320.
    expect(detected.body.resData.areaList[0].targetList).toHaveLength(3)
    const refused = await create({ detectorInputSize: 400 })
    expect(firstError(refused.body)).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/taskConfig/detectorInputSize', value: 400, offered: [512, 320] } })
    const malformed = await create({ detectorInputSize: 'big' })
    expect(firstError(malformed.body)).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/taskConfig/detectorInputSize' } })
    // The task keeps the size it had.
    expect((await call('QueryTaskInfo', { taskId: 'small-persons' })).body.resData.taskConfig).toMatchObject({ detectorInputSize: 320 })
    expect((await call('PTaskCancle', { taskId: 'small-persons', algorithmCode: 'person-detector' })).body.resCode).toBe(1)
  })

  test('answers task queries for unknown tasks with NotCreated and reports cancelled tasks', async () => {
    for (const route of ['QueryTaskStatus', 'QueryTaskInfo', 'QueryTaskOverviewFile']) {
      const { body } = await call(route, { taskId: 'never-created' })
      expect(firstError(body), route).toMatchObject({ messageKey: 'api.error.NotCreated', details: { taskId: 'never-created' } })
      const bad = await call(route, { taskId: '' })
      expect(firstError(bad.body), route).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/taskId' } })
    }
    await call('PTaskCreate', { taskId: 'short-lived', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })
    await call('PTaskCancle', { taskId: 'short-lived', algorithmCode: 'face-detection' })
    const status = (await call('QueryTaskStatus', { taskId: 'short-lived' })).body.resData
    expect(status).toMatchObject({ state: 'cancelled', loaded: false })
  })

  test('forgets a task\'s activity and overview picture when it is cancelled; created again it starts afresh', async () => {
    const task = { taskId: 'forgotten-task', algorithmCode: 'face-detection' }
    const overviews = () => readdirSync(path.join(device.dataDir, 'overview')).filter((name) => name.endsWith('.jpg')).sort()
    const before = overviews()
    expect((await call('PTaskCreate', { ...task, algorithmUpdateTime: String(Date.now()) })).body.resCode).toBe(1)
    expect((await call('PTaskDetectPic', { ...task, imageBase64: sample1.toString('base64') })).body.resCode).toBe(1)
    expect((await call('QueryTaskStatus', { taskId: task.taskId })).body.resData).toMatchObject({ detections: 1 })
    const picture = overviews().filter((name) => !before.includes(name))
    expect(picture).toHaveLength(1)

    expect((await call('PTaskCancle', task)).body.resCode).toBe(1)
    expect(overviews()).toEqual(before)
    expect((await call('QueryTaskStatus', { taskId: task.taskId })).body.resData).toMatchObject({ state: 'cancelled', detections: 0, failures: 0, lastDetectionAt: null, lastError: null })
    expect(firstError((await call('QueryTaskOverviewFile', { taskId: task.taskId })).body)).toMatchObject({ messageKey: 'api.error.OverviewNotFound', details: { taskId: task.taskId } })

    expect((await call('PTaskCreate', { ...task, algorithmUpdateTime: String(Date.now()) })).body.resCode).toBe(1)
    expect((await call('QueryTaskInfo', { taskId: task.taskId })).body.resData).toMatchObject({ state: 'created', detections: 0, overviewAvailable: false })
    expect((await call('PTaskCancle', task)).body.resCode).toBe(1)
  })
})

test.describe('LoadLocalAlgorithmAction', () => {
  test('installs a package folder inside DATA_DIR/algorithms and refuses paths that leave it', async ({ device, mtk }) => {
    const { mkdirSync, writeFileSync, copyFileSync, symlinkSync, readFileSync } = await import('node:fs')
    const base = path.join(device.dataDir, 'algorithms')
    mkdirSync(path.join(base, 'faces'), { recursive: true })
    const manifest = JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8'))
    writeFileSync(path.join(base, 'faces', 'manifest.json'), JSON.stringify({ ...manifest, algorithmId: 'local-faces', algorithmName: 'Local faces' }))
    mkdirSync(path.join(base, 'broken'), { recursive: true })
    writeFileSync(path.join(base, 'broken', 'manifest.json'), JSON.stringify({ algorithmId: 'broken' }))
    mkdirSync(path.join(base, 'linked', 'models'), { recursive: true })
    copyFileSync(path.join(base, 'faces', 'manifest.json'), path.join(base, 'linked', 'manifest.json'))
    symlinkSync('/etc/passwd', path.join(base, 'linked', 'models', 'm.onnx'))
    symlinkSync('/etc', path.join(base, 'escape'))
    const call = (body: unknown) => device.post('/v1/cwai/aihost/LoadLocalAlgorithmAction', body, mtk)

    expect((await call({ path: 'faces' })).body).toMatchObject({ resCode: 1, resData: { algorithmId: 'local-faces', algorithmName: 'Local faces', origin: 'package' } })
    // Usable at once (an installed algorithm package is registered at once).
    expect((await device.post('/gtw/cwai/aihost/PTaskCreate', { algorithmCode: 'local-faces', algorithmUpdateTime: String(Date.now()) }, mtk)).body.resCode).toBe(1)
    expect((await call({ path: 'faces' })).body.resMsg[0]).toMatchObject({ messageKey: 'api.error.AlgorithmExists', details: { algorithmId: 'local-faces' } })
    expect((await call({ path: 'faces', replace: true })).body.resMsg[0]).toMatchObject({ messageKey: 'api.error.AlgorithmInUse', details: { taskIds: ['local-faces'] } })
    expect((await call({ path: 'broken' })).body.resMsg[0]).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid' })
    expect((await call({ path: 'linked', replace: true })).body.resMsg[0]).toMatchObject({ messageKey: 'api.error.AlgorithmPackageUnsafe', details: { entry: 'models/m.onnx' } })
    for (const bad of ['../outside', '/etc', 'a/../../b', 'escape', 'missing']) {
      expect((await call({ path: bad })).body.resMsg[0], bad).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/path' } })
    }
  })
})
