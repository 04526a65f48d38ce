/**
 * Backup, factory reset and restore on the real device run by its supervisor (README "Backup,
 * restore and factory reset"), with a real RTSP camera behind a password, a file camera, a
 * stream task, an image task, a saved layout, a deleted preset, a user model, a face gallery
 * and channel settings with secrets:
 * - damaged backups uploaded through the upload protocol are refused and change nothing;
 * - the factory reset needs its token, and brings the device back to its first sign-in;
 * - backup → factory reset → restore gives back the same answers from every list route.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { md5Hex } from '../../shared/auth/password.ts'
import { addRtspCamera } from '../helpers/cameras.ts'
import { archiveOf, readArchive, resign, rowsOf, jsonl } from '../helpers/backup-archive.ts'
import { CHANGED_PASSWORD, INITIAL_PASSWORD, freePort, type DeviceProcess } from '../helpers/device.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import { startRtspServer, type RtspServer } from '../helpers/rtsp-server.ts'
import { helmetClassifier } from '../helpers/tiny-models.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { until } from '../helpers/processes.ts'
import { cropFace, samplePhoto } from '../galleries/faces.ts'

const root = path.resolve(import.meta.dirname, '../..')
const VIDEO = path.resolve(root, '../shared/media/one-by-one-person-detection.mp4')
const CAMERA_PASSWORD = 's3cret-Cam'
const PASSPHRASE = 'backup passphrase 1'
const RESET_PASSWORD = 'after-Reset-1'
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

/**
 * Answers a restart changes by themselves, whatever the data: what a running camera or task
 * measures (and whether an image task is loaded yet), the time. Everything else must match.
 */
const STREAM_STATS = ['state', 'stateReason', 'inputFps', 'processedFps', 'framesIn', 'framesProcessed', 'framesFailed', 'framesDropped', 'motionSkipped', 'trackedSkipped', 'regionFrames', 'scheduleSkipped', 'discardRate',
  'detectorLatencyP50Ms', 'detectorLatencyP99Ms', 'criticalPathLatencyP99Ms', 'eventWriteP99Ms', 'trackedObjects', 'objectsEntered', 'lastError']
const VOLATILE: Record<string, string[]> = {
  '/gtw/cwai/Camera/page': ['status', 'lastError', 'lastErrorKey', 'width', 'height', 'fps'],
  '/gtw/cwai/Task/page': STREAM_STATS,
  '/gtw/cwai/Task/detail': STREAM_STATS,
  '/v1/cwai/aihost/QueryTaskList': ['loaded'],
  // The schedules' clock.
  '/gtw/cwai/schedule/page': ['now', 'localTime'],
}
/** List routes whose answers are not the device's data: the outbox (kept, not restored) and the host's USB cameras. */
const NOT_COMPARED = new Set(['/gtw/cwai/Event/EventPage', '/gtw/cwai/Camera/usbList'])
const LIST_ROUTE = /\/[A-Za-z]*(page|list|List|Page)$/

/** A shipped algorithm or model is registered again at each start: its time is the start's. */
const PRESET_TIMES = ['updateTime', 'updatedAt']
const isPreset = (value: Record<string, unknown>) => value.origin === 'preset' || value.source === 'preset'

function withoutVolatile(value: unknown, keys: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutVolatile(v, keys))
  if (typeof value !== 'object' || value === null) return value
  const dropped = isPreset(value as Record<string, unknown>) ? [...keys, ...PRESET_TIMES] : keys
  return Object.fromEntries(Object.entries(value).filter(([k]) => !dropped.includes(k)).map(([k, v]) => [k, withoutVolatile(v, keys)]))
}

test.override('deviceOptions', { entry: 'supervisor', env: { CAMERA_RECONNECT_MIN_MS: '500', CAMERA_RECONNECT_MAX_MS: '2000' } })

test.describe('backup → factory reset → restore on the supervised device', () => {
  let device: DeviceProcess
  let rtsp: RtspServer
  let mtk: string
  let rtspCamera: string
  let faceImage: Buffer
  const call = async (route: string, body: unknown = {}) => (await device.post(route, body, mtk)).body
  const ok = async (route: string, body: unknown = {}) => {
    const answer = await call(route, body)
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }
  const login = async (password: string) => (await device.post('/gtw/cwai/login/DoLogin', { account: 'admin', pwd: md5Hex(password) })).body
  const listening = () => device.logs.filter((l) => l.msg === 'listening').length
  const restarted = (before: number) => until(async () => listening() > before, 'the device to listen again', 180_000)

  /** Every list route the device mounts (called with `{}`), and the detail queries of the data made here. */
  async function answers(): Promise<Record<string, unknown>> {
    const routes = (await ok('/v1/cwai/aihost/ViewRoutes')).rows.map((r: { path: string }) => r.path)
      .filter((p: string) => LIST_ROUTE.test(p) && !NOT_COMPARED.has(p)) as string[]
    const queries: [string, unknown][] = [
      ...routes.map((p): [string, unknown] => [p, {}]),
      ['/gtw/cwai/algorithm/page', { pageNum: 1, pageSize: 100 }],
      ['/gtw/cwai/algorithm/layout/list', { pageNum: 1, pageSize: 100 }],
      ['/gtw/cwai/algorithm/layout/detail', { algorithmId: 'my-faces' }],
      ['/gtw/cwai/atomic/Model/list', { pageNo: 1, pageSize: 200 }],
      ['/gtw/cwai/atomic/Model/detail', { modelId: 'helmet-classifier' }],
      ['/gtw/cwai/Library/PersonPage', { galleryId: 'staff' }],
      ['/gtw/cwai/Library/PersonDetail', { galleryId: 'staff', personId: 'ada' }],
      ['/gtw/cwai/System/QueryMqttParam', {}],
      ['/gtw/cwai/System/QueryHttpParam', {}],
      ['/gtw/cwai/network/QueryTargets', {}],
      ['/v1/cwai/aihost/QueryTaskList', { state: 'cancelled' }],
      ['/gtw/cwai/Task/detail', { taskId: 'door-watch' }],
    ]
    const out: Record<string, unknown> = {}
    for (const [route, body] of queries) {
      const answer = await call(route, body)
      out[`${route} ${JSON.stringify(body)}`] = withoutVolatile({ resCode: answer.resCode, resData: answer.resData, resMsg: answer.resMsg }, VOLATILE[route] ?? [])
    }
    return out
  }

  let before: Record<string, unknown>

  test.beforeAll(async ({ device: started, mtk: session }) => {
    rtsp = await startRtspServer(VIDEO, await freePort(), '/cam', `cam-user:${CAMERA_PASSWORD}`)
    device = started
    // Reassigned by the tests that sign in again (after the factory reset, after the restore).
    mtk = session
    // Retried as the device advises when the just-started server fails the first session (test/helpers/cameras.ts).
    rtspCamera = await addRtspCamera(device, mtk, `rtsp://cam-user:${CAMERA_PASSWORD}@127.0.0.1:${new URL(rtsp.url).port}/cam`, 'door')
    const video = await uploadFile(device, mtk, readFileSync(VIDEO), 'office.mp4', 'video')
    await ok('/gtw/cwai/Camera/add', { cameraName: 'office', sourceType: 'file', uploadId: video })
    await ok('/v1/cwai/aihost/TaskCreate', { taskId: 'door-watch', algorithmCode: 'person-detector', cameraId: rtspCamera, targetFps: 1 })
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId: 'img-task', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()), taskConfig: { scoreThreshold: 0.7 } })
    const layout = JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8'))
    await ok('/gtw/cwai/algorithm/layout/save', { manifest: { ...layout, algorithmId: 'my-faces', algorithmName: 'My faces' } })
    await ok('/gtw/cwai/Algorithm/delete', { algorithmId: 'text-ocr' })
    await ok('/gtw/cwai/atomic/Model/upload', { uploadId: await uploadFile(device, mtk, Buffer.from(helmetClassifier()), 'helmet.onnx', 'model'), modelId: 'helmet-classifier' })
    const photo = await samplePhoto(device, mtk, 1)
    faceImage = await cropFace(photo, 0)
    await ok('/gtw/cwai/Library/AddLibrary', { galleryId: 'staff', name: 'Staff' })
    await ok('/gtw/cwai/Library/AddPerson', { galleryId: 'staff', personId: 'ada', name: 'Ada', attributes: { team: 'ops' } })
    await ok('/gtw/cwai/Library/AddPersonImage', { galleryId: 'staff', personId: 'ada', imageBase64: faceImage.toString('base64') })
    await ok('/gtw/cwai/System/SetMqttParam', { enabled: false, url: 'mqtt://127.0.0.1:1', username: 'dev', password: 'Mqtt-Secret-888' })
    await ok('/gtw/cwai/System/SetHttpParam', { enabled: false, urls: ['http://127.0.0.1:9/hook'], secret: 'Hook-Secret-999' })
    await ok('/gtw/cwai/network/SetTargets', { qualityTargets: [{ name: 'gw', host: '127.0.0.1', port: 80 }], checks: [{ name: 'dns', type: 'dns', hostname: 'localhost' }], samples: 2, timeoutMs: 500 })
    await until(async () => (await ok('/gtw/cwai/Camera/page', {})).rows.find((r: any) => r.cameraId === rtspCamera)?.status === 'online', 'the RTSP camera online', 180_000)
    before = await answers()
    // Every query answers data, so the comparisons are not of refusals; a list that needs its parent named refuses `{}` (it is queried with one too).
    const refused = Object.entries(before).filter(([, a]) => (a as { resCode: number }).resCode !== 1).map(([query]) => query)
    expect(refused.every((query) => query.endsWith(' {}')), refused.join()).toBe(true)
    expect(Object.keys(before).length - refused.length).toBeGreaterThanOrEqual(20)
  }, 600_000)
  test.afterAll(async () => {
    await rtsp?.stop()
  })

  let backup: Buffer

  test('produces a backup and serves it whole and by single ranges', async () => {
    expect((await call('/gtw/cwai/System/CreateBackup', { passphrase: 'short' })).resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/passphrase' } })
    const info = await ok('/gtw/cwai/System/CreateBackup', { passphrase: PASSPHRASE })
    expect(info).toMatchObject({ formatVersion: 1, files: expect.any(Number), tables: expect.objectContaining({ cameras: 2, face_galleries: 1, gallery_faces: 1, stream_tasks: 1, users: 1 }) })
    const download = (headers: Record<string, string> = {}) => fetch(`${device.url}/gtw/cwai/System/DownloadBackup`, {
      method: 'POST', headers: { mtk, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ backupId: info.backupId }),
    })
    const whole = await download()
    expect(whole.status).toBe(200)
    expect(whole.headers.get('content-type')).toBe('application/gzip')
    expect(whole.headers.get('content-disposition')).toContain(info.fileName)
    backup = Buffer.from(await whole.arrayBuffer())
    expect(String(backup.length)).toBe(info.sizeBytes)
    expect(sha256(backup)).toBe(info.sha256)
    const half = Math.floor(backup.length / 2)
    const first = await download({ range: `bytes=0-${half - 1}` })
    const rest = await download({ range: `bytes=${half}-` })
    expect([first.status, rest.status]).toEqual([206, 206])
    expect(rest.headers.get('content-range')).toBe(`bytes ${half}-${backup.length - 1}/${backup.length}`)
    expect(Buffer.concat([Buffer.from(await first.arrayBuffer()), Buffer.from(await rest.arrayBuffer())]).equals(backup)).toBe(true)
    expect((await download({ range: `bytes=${backup.length}-` })).status).toBe(416)
    expect((await call('/gtw/cwai/System/DownloadBackup', { backupId: 'not-the-backup' })).resMsg[0]).toMatchObject({ messageKey: 'api.error.BackupNotFound', msgCode: '8151' })
    // The credentials are in it, encrypted.
    const entries = await readArchive(backup)
    expect(backup.includes(CAMERA_PASSWORD)).toBe(false)
    expect(rowsOf(entries, 'cameras').find((r) => r.camera_id === rtspCamera)).toMatchObject({ password: { $secret: expect.any(String) } })
    expect([...entries.keys()].some((e) => e.startsWith('files/algorithm-packages/my-faces/'))).toBe(true)
    expect([...entries.keys()].some((e) => e.startsWith('files/models/'))).toBe(true)
    expect([...entries.keys()].some((e) => e.startsWith('files/cameras/'))).toBe(true)
  }, 300_000)

  test('a damaged backup (truncated, bad checksum, unsafe entry, unknown table or column, newer format) is refused and changes nothing', async () => {
    const entries = await readArchive(backup)
    const camerasWith = (edit: (row: Record<string, unknown>) => void) => resign(entries, PASSPHRASE, (_m, e) => {
      const rows = rowsOf(e, 'cameras')
      edit(rows[0]!)
      e.set('db/cameras.jsonl', jsonl(rows))
    })
    const badChecksum = new Map(entries)
    badChecksum.set('db/face_galleries.jsonl', Buffer.from(entries.get('db/face_galleries.jsonl')!.toString().replace('Staff', 'Stuff')))
    const cases: [string, Buffer, string][] = [
      ['truncated', backup.subarray(0, backup.length - 4096), 'api.error.BackupArchiveCorrupt'],
      ['bad checksum', archiveOf(badChecksum), 'api.error.BackupChecksumMismatch'],
      ['unsafe entry', archiveOf(entries, [{ path: '../../outside.txt', data: 'x' }]), 'api.error.BackupArchiveUnsafe'],
      ['link entry', archiveOf(entries, [{ path: 'files/models/passwd', type: 'SymbolicLink', linkpath: '/etc/passwd' }]), 'api.error.BackupArchiveUnsafe'],
      ['unknown column', archiveOf(await camerasWith((r) => { r.no_such_column = 1 })), 'api.error.BackupRowInvalid'],
      ['unknown table', archiveOf(await resign(entries, PASSPHRASE, (m, e) => {
        m.tables.push({ name: 'no_such_table', entry: 'db/no_such_table.jsonl', rows: 1, bytes: 0, sha256: '' })
        e.set('db/no_such_table.jsonl', jsonl([{ a: 1 }]))
      })), 'api.error.BackupRowInvalid'],
      ['newer format', archiveOf(await resign(entries, PASSPHRASE, (m) => { (m as { formatVersion: number }).formatVersion = 2 })), 'api.error.BackupFormatUnsupported'],
    ]
    const starts = listening()
    for (const [name, bytes, messageKey] of cases) {
      const uploadId = await uploadFile(device, mtk, bytes, `${name}.tar.gz`, 'backup')
      expect((await call('/gtw/cwai/System/Restore', { uploadId, passphrase: PASSPHRASE })).resMsg[0], name).toMatchObject({ messageKey })
      await call('/gtw/cwai/atomic/model/cancelUpload', { uploadId })
    }
    expect(listening()).toBe(starts)
    expect(await ok('/gtw/cwai/System/BackupStatus')).toMatchObject({ pending: null, last: null })
    expect(readdirSync(path.join(device.dataDir, 'restore'))).toEqual([])
    expect(await answers()).toEqual(before)
  }, 300_000)

  test('factory reset: refused without, with a wrong and with another session\'s token; with its token the device comes back at its first sign-in', async () => {
    expect((await call('/gtw/cwai/System/FactoryReset', {})).resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/confirmationToken' } })
    expect((await call('/gtw/cwai/System/FactoryReset', { confirmationToken: 'f'.repeat(32) })).resMsg[0]).toMatchObject({ messageKey: 'api.error.FactoryResetTokenInvalid' })
    const challenge = await ok('/gtw/cwai/System/RequestFactoryReset')
    expect(challenge).toMatchObject({ confirmationToken: expect.stringMatching(/^[0-9a-f]{32}$/), expiresInSeconds: 60 })
    const other = (await login(CHANGED_PASSWORD)).resData.mtk
    expect((await device.post('/gtw/cwai/System/FactoryReset', { confirmationToken: challenge.confirmationToken }, other)).body.resMsg[0]).toMatchObject({ messageKey: 'api.error.FactoryResetTokenInvalid' })
    expect(await answers()).toEqual(before)

    const { confirmationToken } = await ok('/gtw/cwai/System/RequestFactoryReset')
    const starts = listening()
    expect(await ok('/gtw/cwai/System/FactoryReset', { confirmationToken })).toEqual({ resetting: true })
    await restarted(starts)
    expect((await login(CHANGED_PASSWORD)).resMsg[0]).toMatchObject({ messageKey: 'api.error.LoginFailed' })
    const first = await login(INITIAL_PASSWORD)
    expect(first.resData.passwordChangeRequired).toBe(true)
    expect((await device.post('/gtw/cwai/login/ChangePassword', { oldPwd: md5Hex(INITIAL_PASSWORD), newPwd: md5Hex(RESET_PASSWORD) }, first.resData.mtk)).body.resCode).toBe(1)
    mtk = (await login(RESET_PASSWORD)).resData.mtk
    expect((await ok('/gtw/cwai/Camera/page', {})).total).toBe(0)
    expect((await ok('/gtw/cwai/Library/LibraryPage', {})).total).toBe(0)
    expect((await ok('/gtw/cwai/atomic/Model/list', { source: 'user' })).total).toBe(0)
    expect((await ok('/gtw/cwai/algorithm/layout/list', { origin: 'layout' })).total).toBe(0)
    expect((await ok('/v1/cwai/aihost/QueryTaskList', {})).total).toBe(0)
    expect((await ok('/gtw/cwai/algorithm/page', { algorithmId: 'text-ocr', pageNum: 1, pageSize: 10 })).total).toBe(1)
    for (const gone of ['cameras', 'models', 'algorithm-packages/my-faces', 'backup']) expect(existsSync(path.join(device.dataDir, gone)), gone).toBe(false)
    const events = (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 100 })).rows.map((e: { kind: string }) => e.kind)
    expect(events).toContain('device.factoryReset')
    expect(events).not.toContain('backup.created')
  }, 300_000)

  test('restore: the wrong passphrase is refused and leaves the upload usable; then the device restarts with every answer as before', async () => {
    const uploadId = await uploadFile(device, mtk, backup, 'device-backup.tar.gz', 'backup')
    expect((await call('/gtw/cwai/System/Restore', { uploadId, passphrase: 'wrong passphrase' })).resMsg[0]).toMatchObject({ messageKey: 'api.error.BackupAuthenticationFailed', msgCode: '8157' })
    const starts = listening()
    const staged = await ok('/gtw/cwai/System/Restore', { uploadId, passphrase: PASSPHRASE })
    expect(staged).toMatchObject({ restarting: true, migrationsRun: 0, tables: expect.objectContaining({ cameras: 2 }) })
    await restarted(starts)
    // The accounts are the backup's: the password of before the reset, no change pending.
    expect((await login(RESET_PASSWORD)).resMsg[0]).toMatchObject({ messageKey: 'api.error.LoginFailed' })
    const signedIn = await login(CHANGED_PASSWORD)
    expect(signedIn.resData.passwordChangeRequired).toBe(false)
    mtk = signedIn.resData.mtk
    expect(await ok('/gtw/cwai/System/BackupStatus')).toMatchObject({ pending: null, last: { outcome: 'restored', reason: null, migrationsRun: 0 } })
    expect(await answers()).toEqual(before)
    // The camera's password came back decrypted: it connects; the face descriptors came back: the face is found again.
    await until(async () => (await ok('/gtw/cwai/Camera/page', {})).rows.find((r: any) => r.cameraId === rtspCamera)?.status === 'online', 'the restored RTSP camera online', 180_000)
    const found = await ok('/gtw/cwai/Library/SearchByImage', { galleryId: 'staff', imageBase64: faceImage.toString('base64') })
    expect(JSON.stringify(found)).toContain('"ada"')
    const events = (await ok('/gtw/cwai/Event/EventPage', { pageNum: 1, pageSize: 100 })).rows
    expect(events.find((e: { kind: string }) => e.kind === 'restore.finished')?.payload).toMatchObject({ outcome: 'restored', migrationsRun: 0 })
    // Neither the passphrase nor a credential was ever logged, through all of it.
    const logged = JSON.stringify(device.logs)
    for (const secret of [PASSPHRASE, CAMERA_PASSWORD, 'Mqtt-Secret-888', 'Hook-Secret-999']) expect(logged).not.toContain(secret)
  }, 600_000)
})
