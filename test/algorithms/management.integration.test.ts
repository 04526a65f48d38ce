/**
 * Algorithm and layout management over HTTP with the real runtime and sidecar (spec 4.10
 * Algorithm, Algorithm layout (spec 4.10): export → delete → upload the exported
 * package → run it again). Shapes: models/README.md "Algorithm management".
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { expect } from 'vitest'
import { unzip } from '../helpers/zip.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startDevice, type DeviceProcess } from '../helpers/device.ts'
import { helmetClassifier } from '../helpers/tiny-models.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { samplePath } from '../inference/helpers.ts'

const root = path.resolve(import.meta.dirname, '../..')
const shipped = (id: string) => JSON.parse(readFileSync(path.join(root, 'models/manifests', `${id}.json`), 'utf8'))
const sample1 = readFileSync(samplePath(1)).toString('base64')
const targetsOf = (resData: any): any[] => resData.areaList.flatMap((a: any) => a.targetList)

/** Names of the regular files of a tar.gz (ustar headers, 512-byte blocks). */
function tarNames(gz: Buffer): string[] {
  const tar = gunzipSync(gz)
  const names: string[] = []
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512)
    if (header.every((b) => b === 0)) break
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '')
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '')
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8)
    if (header[156] === 0x30 || header[156] === 0) names.push(prefix ? `${prefix}/${name}` : name)
    at += 512 + Math.ceil(size / 512) * 512
  }
  return names.sort()
}

test.describe('algorithm and layout management (spec 4.10)', () => {
  let device: DeviceProcess
  let mtk: string
  /** The file's device started again on its data folder (the last test). */
  let restarted: DeviceProcess | undefined
  const post = (route: string, body: unknown) => device.post(route, body, mtk)
  const download = async (route: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${device.url}${route}`, { method: 'POST', headers: { mtk, 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) })
    return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) }
  }
  const create = (algorithmCode: string, taskId = algorithmCode) =>
    post('/gtw/cwai/aihost/PTaskCreate', { algorithmCode, taskId, algorithmUpdateTime: String(Date.now()), mvDebug: 'debug' })
  const detect = (algorithmCode: string, taskId = algorithmCode) =>
    post('/gtw/cwai/aihost/PTaskDetectPic', { algorithmCode, taskId, imageBase64: sample1 })
  const cancel = (algorithmCode: string, taskId = algorithmCode) =>
    post('/gtw/cwai/aihost/PTaskCancle', { algorithmCode, taskId, mvDebug: 'debug' })
  const pageIds = async () => (await post('/gtw/cwai/Algorithm/page', { pageNum: 1, pageSize: 100 })).body.resData.rows.map((r: any) => r.algorithmId)
  const error = (body: any) => body.resMsg[0]

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
  })
  // Before the fixture removes the data folder they share.
  test.afterAll(async () => {
    await restarted?.stop()
  })

  test('lists every shipped layout and details one as its manifest', async () => {
    const list = (await post('/gtw/cwai/algorithm/layout/list', { pageNum: 1, pageSize: 100 })).body.resData
    expect(list.total).toBe(12)
    expect(list.rows.every((r: any) => r.origin === 'preset')).toBe(true)
    const faces = list.rows.find((r: any) => r.algorithmId === 'face-detection')
    expect(faces.nodes).toEqual(shipped('face-detection').nodes.map((n: any) => ({ id: n.id, action: n.action })))
    const detail = (await post('/gtw/cwai/algorithm/layout/detail', { algorithmId: 'text-ocr' })).body.resData
    expect(detail).toMatchObject({ algorithmId: 'text-ocr', origin: 'preset', manifest: shipped('text-ocr') })
    const paged = (await post('/gtw/cwai/algorithm/layout/list', { pageNum: 2, pageSize: 4 })).body.resData
    expect(paged.rows.map((r: any) => r.algorithmId)).toEqual(list.rows.slice(4, 8).map((r: any) => r.algorithmId))
    expect(error((await post('/gtw/cwai/algorithm/layout/detail', { algorithmId: 'nope' })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmNotFound', details: { algorithmId: 'nope' } })
  })

  test('lists the algorithms that can count people (passenger flow)', async () => {
    const { body } = await post('/gtw/cwai/Algorithm/passengerFlowList', {})
    // Person boxes: the COCO detector, the person detector and the body recognition and helmet
    // analysis built on it; not segmentation regions, faces, text or whole images.
    expect(body.resData.rows.map((r: any) => r.algorithmId)).toEqual(['body-recognition', 'no-safety-helmet-analysis', 'object-detection', 'person-detector'])
    expect(body.resData.total).toBe(4)
    expect(body.resData.rows[0]).toMatchObject({ algorithmUsage: '2', origin: 'preset', runningStatus: 0 })
    expect(error((await post('/gtw/cwai/Algorithm/passengerFlowList', { x: 1 })).body)).toMatchObject({ messageKey: 'api.error.InvalidParam' })
  })

  test('saves a layout that runs at once, refuses invalid ones, and updates the row', async () => {
    const layout = { ...shipped('person-detector'), algorithmId: 'crowd-check', algorithmName: 'Crowd check' }
    layout.nodes[0].scoreThreshold = 0.3
    const saved = await post('/gtw/cwai/algorithm/layout/save', { manifest: layout })
    expect(saved.body).toMatchObject({ resCode: 1, resData: { algorithmId: 'crowd-check', origin: 'layout', created: true } })
    expect(await pageIds()).toContain('crowd-check')
    expect((await create('crowd-check')).body.resCode).toBe(1)
    const people = targetsOf((await detect('crowd-check')).body.resData)
    expect(people.length).toBeGreaterThanOrEqual(3)
    expect(people.every((t: any) => t.confidence[0].label === 'person' && t.confidence[0].confidence >= 0.3)).toBe(true)

    // Replacing a pipeline that a task runs is refused; the description may still change.
    expect(error((await post('/gtw/cwai/algorithm/layout/save', { manifest: layout })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmInUse', details: { algorithmId: 'crowd-check', taskIds: ['crowd-check'] } })
    const updated = await post('/gtw/cwai/Algorithm/update', { algorithmId: 'crowd-check', algorithmName: 'Crowd counter', description: 'people in view' })
    expect(updated.body.resData).toMatchObject({ algorithmId: 'crowd-check', algorithmName: 'Crowd counter', description: 'people in view' })
    const row = (await post('/gtw/cwai/Algorithm/page', { algorithmId: 'crowd-check' })).body.resData.rows[0]
    expect(row).toMatchObject({ algorithmName: 'Crowd counter', description: 'people in view', algorithmUsage: '2' })
    expect((await detect('crowd-check')).body.resCode).toBe(1)

    expect(error((await post('/gtw/cwai/Algorithm/add', { manifest: layout })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmExists' })
    const invalid = [
      { ...layout, algorithmId: 'x1', nodes: [{ ...layout.nodes[0], treshold: 1 }] },
      { ...layout, algorithmId: 'x2', result: { ...layout.result, targets: 'missing' } },
      { ...layout, algorithmId: 'x3', models: { centernet: { source: { path: 'models/none.onnx' }, format: 'onnx' } } },
      { ...layout, algorithmId: 'x4', models: { centernet: { source: { package: 'sharp', file: '../../etc/passwd' }, format: 'onnx' } } },
    ]
    for (const manifest of invalid) {
      const refused = error((await post('/gtw/cwai/Algorithm/add', { manifest })).body)
      expect(refused, manifest.algorithmId).toMatchObject({ messageKey: 'api.error.AlgorithmInvalid', recommendedAction: 'CHECK_REQUEST_PARAMETERS' })
      expect(typeof refused.details.reason).toBe('string')
    }
    expect(await pageIds()).not.toContain('x1')
    expect(error((await post('/gtw/cwai/Algorithm/update', { algorithmId: 'nope', version: '2' })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmNotFound' })
    expect((await cancel('crowd-check')).body.resCode).toBe(1)
  })

  test('refuses model sources that are not package names, and never shows where the device is installed', async () => {
    const layout = shipped('person-detector')
    const withSource = (algorithmId: string, source: Record<string, string>) =>
      ({ ...layout, algorithmId, models: { ...layout.models, centernet: { source, format: 'onnx' } } })
    const tricks = ['.', '..', './sharp', '../sharp', 'sharp/..', '/etc', '@scope/..', '@scope/.', 'node_modules/sharp', '.bin', 'Sharp']
    for (const [index, pkg] of tricks.entries()) {
      const refused = error((await post('/gtw/cwai/Algorithm/add', { manifest: withSource(`trick-${index}`, { package: pkg, file: 'package.json' }) })).body)
      expect(refused, pkg).toMatchObject({ messageKey: 'api.error.AlgorithmInvalid', details: { reason: expect.stringContaining('/models/centernet/source/package') } })
    }
    // A real package name that is not installed, and a real package's file that is no model:
    // refused (at once, or when a task loads it) without an absolute path anywhere.
    const missing = error((await post('/gtw/cwai/Algorithm/add', { manifest: withSource('not-there', { package: 'no-such-package-xyz', file: 'model.onnx' }) })).body)
    expect(missing).toMatchObject({ messageKey: 'api.error.AlgorithmInvalid', details: { reason: expect.stringContaining('no-such-package-xyz') } })
    const answers = [missing]
    const added = await post('/gtw/cwai/Algorithm/add', { manifest: withSource('not-a-model', { package: 'sharp', file: 'package.json' }) })
    answers.push(added.body.resCode === 1 ? (await create('not-a-model')).body : added.body)
    expect(answers[1].resCode).toBe(0)
    if (added.body.resCode === 1) expect((await post('/gtw/cwai/Algorithm/delete', { algorithmId: 'not-a-model' })).body.resCode).toBe(1)
    for (const answer of answers) {
      const text = JSON.stringify(answer)
      expect(text).not.toContain(root)
      expect(text).not.toContain(device.dataDir)
      expect(text).not.toContain(realpathSync(path.join(root, 'node_modules')))
    }
  })

  test('exports an algorithm with its operator model, deletes it, installs the package again and runs it', async () => {
    const modelBytes = Buffer.from(helmetClassifier())
    const modelUpload = await uploadFile(device, mtk, modelBytes, 'helmet.onnx', 'model')
    expect((await post('/gtw/cwai/atomic/Model/upload', { uploadId: modelUpload, modelId: 'site-helmet' })).body.resCode).toBe(1)
    const layout = shipped('no-safety-helmet-analysis')
    layout.algorithmId = 'site-helmets'
    layout.models['helmet-classifier'].source = { uploaded: 'site-helmet' }
    expect((await post('/gtw/cwai/Algorithm/add', { manifest: layout })).body.resCode).toBe(1)
    expect((await create('site-helmets')).body.resCode).toBe(1)
    const before = targetsOf((await detect('site-helmets')).body.resData)
    expect(before.length).toBeGreaterThanOrEqual(3)
    expect(before.every((t: any) => t.bLogicResult === true)).toBe(true)

    const zip = await download('/gtw/cwai/algorithm/layout/exportSingleAlg', { algorithmId: 'site-helmets' })
    expect(zip.status).toBe(200)
    expect(zip.headers.get('content-type')).toBe('application/zip')
    expect(zip.headers.get('content-disposition')).toContain('site-helmets')
    const entries = await unzip(zip.bytes)
    expect([...entries.keys()].sort()).toEqual(['manifest.json', 'models/helmet-classifier.onnx'])
    expect(entries.get('models/helmet-classifier.onnx')!.equals(modelBytes)).toBe(true)
    const exported = JSON.parse(entries.get('manifest.json')!.toString('utf8'))
    // The operator's model travels in the package; the shipped detector is named, not copied.
    expect(exported.models).toEqual({ ...layout.models, 'helmet-classifier': { source: { path: 'models/helmet-classifier.onnx' }, format: 'onnx' } })

    expect(error((await post('/gtw/cwai/Algorithm/delete', { algorithmId: 'site-helmets' })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmInUse', details: { taskIds: ['site-helmets'] } })
    expect((await cancel('site-helmets')).body.resCode).toBe(1)
    expect((await post('/gtw/cwai/Algorithm/delete', { algorithmId: 'site-helmets' })).body.resCode).toBe(1)
    expect((await post('/gtw/cwai/atomic/Model/delete', { modelId: 'site-helmet' })).body.resCode).toBe(1)
    expect(await pageIds()).not.toContain('site-helmets')
    expect(error((await create('site-helmets')).body)).toMatchObject({ messageKey: 'api.error.ActionAlgLoadFailed' })
    expect(error((await post('/gtw/cwai/Algorithm/delete', { algorithmId: 'site-helmets' })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmNotFound' })

    const packageUpload = await uploadFile(device, mtk, zip.bytes, 'site-helmets.zip', 'algorithm')
    const installed = await post('/gtw/cwai/Algorithm/upload', { uploadId: packageUpload })
    expect(installed.body).toMatchObject({ resCode: 1, resData: { algorithms: [{ algorithmId: 'site-helmets', origin: 'package' }] } })
    // spec 3.1: the upload was consumed.
    expect(error((await post('/gtw/cwai/Algorithm/upload', { uploadId: packageUpload })).body).messageKey).toBe('api.error.uploadConsumed')
    expect((await create('site-helmets')).body.resCode).toBe(1)
    const after = targetsOf((await detect('site-helmets')).body.resData)
    expect(after.map((t: any) => [t.box, t.bLogicResult, t.confidence])).toEqual(before.map((t: any) => [t.box, t.bLogicResult, t.confidence]))
    expect((await cancel('site-helmets')).body.resCode).toBe(1)
  })

  test('exports several algorithms as tar.gz and installs them back only with replace', async () => {
    const gz = await download('/gtw/cwai/algorithm/layout/export', { algorithmIds: ['face-detection', 'site-helmets'] })
    expect(gz.status).toBe(200)
    expect(gz.headers.get('content-type')).toBe('application/gzip')
    expect(tarNames(gz.bytes)).toEqual(['face-detection/manifest.json', 'site-helmets/manifest.json', 'site-helmets/models/helmet-classifier.onnx'])
    const upload = () => uploadFile(device, mtk, gz.bytes, 'algorithms.tar.gz', 'algorithm')
    expect(error((await post('/gtw/cwai/Algorithm/upload', { uploadId: await upload() })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmExists', details: { algorithmId: 'face-detection' } })
    const replaced = await post('/gtw/cwai/Algorithm/upload', { uploadId: await upload(), replace: true })
    expect(replaced.body.resData.algorithms.map((a: any) => a.algorithmId)).toEqual(['face-detection', 'site-helmets'])
    expect(error((await post('/gtw/cwai/algorithm/layout/export', { algorithmIds: ['face-detection', 'nope'] })).body)).toMatchObject({ messageKey: 'api.error.AlgorithmNotFound', details: { algorithmId: 'nope' } })
  })

  test('exports answer a single Range (spec 4.11): a middle range is 206, an unsatisfiable one 416; nothing is left in the scratch folder', async () => {
    const exports: [string, unknown][] = [
      ['/gtw/cwai/algorithm/layout/exportSingleAlg', { algorithmId: 'face-detection' }],
      ['/gtw/cwai/algorithm/layout/export', { algorithmIds: ['face-detection', 'text-ocr'] }],
    ]
    for (const [route, body] of exports) {
      const whole = await download(route, body)
      expect(whole.status, route).toBe(200)
      expect(whole.headers.get('accept-ranges'), route).toBe('bytes')
      expect(whole.headers.get('content-length'), route).toBe(String(whole.bytes.length))
      const size = whole.bytes.length
      expect(size, route).toBeGreaterThan(300)
      // The same algorithms export to the same bytes, so a range of a second request continues the first.
      const middle = await download(route, body, { range: 'bytes=100-299' })
      expect(middle.status, route).toBe(206)
      expect(middle.headers.get('content-range'), route).toBe(`bytes 100-299/${size}`)
      expect(middle.bytes.equals(whole.bytes.subarray(100, 300)), route).toBe(true)
      const unsatisfiable = await download(route, body, { range: `bytes=${size}-` })
      expect(unsatisfiable.status, route).toBe(416)
      expect(unsatisfiable.headers.get('content-range'), route).toBe(`bytes */${size}`)
      expect(JSON.parse(unsatisfiable.bytes.toString('utf8')).resMsg[0], route).toMatchObject({ messageKey: 'api.error.rangeNotSatisfiable', details: { sizeBytes: String(size) } })
    }
    const scratch = path.join(device.dataDir, 'tmp')
    const left = () => readdirSync(scratch).filter((name) => name.startsWith('export-') || name.startsWith('algorithm-export-'))
    for (let i = 0; i < 20 && left().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(left()).toEqual([])
  })

  test('a deleted shipped algorithm stays deleted after a restart until its package is installed again', async () => {
    const zip = await download('/gtw/cwai/algorithm/layout/exportSingleAlg', { algorithmId: 'face-detection-near' })
    // Shipped model files stay on the device (spec 7.1 DefaultCantBeExport): only the manifest travels.
    expect([...(await unzip(zip.bytes)).keys()]).toEqual(['manifest.json'])
    expect((await post('/gtw/cwai/Algorithm/delete', { algorithmId: 'face-detection-near' })).body.resCode).toBe(1)

    await device.stop()
    device = restarted = await startDevice({ dataDir: device.dataDir })
    mtk = await device.adminToken()
    const ids = await pageIds()
    expect(ids).not.toContain('face-detection-near')
    expect(ids).toEqual(expect.arrayContaining(['site-helmets', 'crowd-check', 'face-detection']))

    const uploadId = await uploadFile(device, mtk, zip.bytes, 'near.zip', 'algorithm')
    expect((await post('/gtw/cwai/Algorithm/upload', { uploadId })).body.resCode).toBe(1)
    expect((await create('face-detection-near', 'near-task')).body.resCode).toBe(1)
    expect((await detect('face-detection-near', 'near-task')).body.resCode).toBe(1)
    // Nothing half-written is left behind in the package folder.
    expect(readdirSync(path.join(device.dataDir, 'algorithm-packages')).sort()).toEqual(['crowd-check', 'face-detection', 'face-detection-near', 'site-helmets'])
  })
})
