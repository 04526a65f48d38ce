/**
 * System settings over HTTP on the built device (spec 4.10 System): time zone and NTP refusal,
 * image quality applied to the next overlay JPEG, logo upload with SVG sanitising and reset,
 * log level and area debug switches applied live, and the ranged log download.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { uploadFile } from '../helpers/upload-file.ts'
import { firstLuminanceQuantizer } from './jpeg-quantizer.ts'

const sample = readFileSync(path.resolve('node_modules/@vladmandic/face-api/demo/sample1.jpg'))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test.override('deviceOptions', { env: { TIME_SERVICE: 'none', TZ: 'UTC' } })

test.describe('system settings over HTTP', () => {
  let device: DeviceProcess
  let mtk: string
  const post = async (route: string, body: unknown = {}) => (await device.post(`/gtw/cwai/System/${route}`, body, mtk)).body
  const get = (route: string, headers: Record<string, string> = {}) => fetch(`${device.url}/gtw/cwai/System/${route}`, { headers: { mtk, ...headers } })

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
  })

  test('sets an IANA time zone, refuses an unknown one, and refuses NTP servers without a time service', async () => {
    const initial = await post('QueryTimeParam')
    expect(initial.resData).toMatchObject({ timeZone: 'UTC', utcOffsetMinutes: 0, ntpServers: [], timeService: { type: null, reason: 'TIME_SERVICE is none' } })
    const kolkata = await post('SetTimeParam', { timeZone: 'Asia/Kolkata' })
    expect(kolkata.resData).toMatchObject({ timeZone: 'Asia/Kolkata', utcOffsetMinutes: 330 })
    // localTime is the same instant as `now`, written with the zone's +05:30.
    expect(kolkata.resData.localTime).toMatch(/\+05:30$/)
    expect(Date.parse(kolkata.resData.localTime)).toBe(kolkata.resData.now)
    expect((await post('SetTimeParam', { timeZone: 'Mars/Olympus_Mons' })).resMsg[0]).toMatchObject({ messageKey: 'api.error.TimeZoneUnknown', msgCode: '8111' })
    expect((await post('SetTimeParam', { timeZone: '+05:00' })).resMsg[0].messageKey).toBe('api.error.TimeZoneUnknown')
    const ntp = await post('SetTimeParam', { timeZone: 'Europe/Berlin', ntpServers: ['pool.ntp.org'] })
    expect(ntp.resMsg[0]).toMatchObject({ messageKey: 'api.error.TimeServiceUnavailable', details: { reason: 'TIME_SERVICE is none' }, recommendedAction: 'CHANGE_DEPLOYMENT_POLICY' })
    expect((await post('SetTimeParam', { ntpServers: ['bad host!'] })).resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/ntpServers/0' } })
    // A refusal changes nothing, the zone sent with it included.
    expect((await post('QueryTimeParam')).resData).toMatchObject({ timeZone: 'Asia/Kolkata', ntpServers: [] })
    expect((await post('QueryTimeDrift')).resData.samples).toEqual([])
  })

  test('encodes the next overlay with the quality and size just set', async () => {
    const call = (route: string, body: unknown) => device.post(`/gtw/cwai/aihost/${route}`, body, mtk)
    expect((await call('PTaskCreate', { taskId: 'quality', algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })).body.resCode).toBe(1)
    const overlay = async () => {
      const uploadId = await uploadFile(device, mtk, sample, 'sample1.jpg', 'image')
      const answer = (await call('PTaskDetectPic', { taskId: 'quality', algorithmCode: 'face-detection', uploadId })).body
      expect(answer.resCode).toBe(1)
      const jpeg = Buffer.from(String(answer.resData.fullPicture).replace(/^data:image\/jpeg;base64,/, ''), 'base64')
      return { jpeg, meta: await sharp(jpeg).metadata() }
    }
    const before = await overlay()
    const source = await sharp(sample).metadata()
    expect([before.meta.width, before.meta.height]).toEqual([source.width, source.height])
    // libjpeg's tables: quality 80 scales the first luminance entry 16 by 40 % → 6.
    expect(firstLuminanceQuantizer(before.jpeg)).toBe(6)

    const set = await post('SetImageQualityParam', { overlay: { quality: 30, maxSide: 640 } })
    expect(set.resData).toEqual({ overlay: { quality: 30, maxSide: 640 }, snapshot: { quality: 80, maxSide: 0 }, capture: { quality: 85, maxSide: 0 } })
    const after = await overlay()
    // Quality 30 scales by 5000 / 30 = 166 % → (16 × 166 + 50) / 100 = 27; the longer side is 640.
    expect(firstLuminanceQuantizer(after.jpeg)).toBe(27)
    expect(Math.max(after.meta.width!, after.meta.height!)).toBe(640)
    expect(after.meta.width! / after.meta.height!).toBeCloseTo(source.width! / source.height!, 2)
    expect((await post('SetImageQualityParam', { capture: { quality: 0 } })).resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/capture/quality' } })
    expect((await post('QueryImageQualityParam')).resData.overlay).toEqual({ quality: 30, maxSide: 640 })
    await call('PTaskCancle', { taskId: 'quality', algorithmCode: 'face-detection' })
  })

  test('sanitises an uploaded SVG logo, takes a PNG, refuses what is not a logo, and resets to the default', async () => {
    const initial = await post('QueryLogo')
    expect(initial.resData).toMatchObject({ custom: false, contentType: 'image/svg+xml', url: '/gtw/cwai/System/Logo' })
    const evil = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" onload="alert(1)">' +
      '<script>fetch("/gtw/cwai/login/Logout")</script><rect width="40" height="20" fill="#123456" onclick="steal()"/>' +
      '<image href="http://203.0.113.9/track.png" width="1" height="1"/><circle cx="10" cy="10" r="5" fill="url(http://203.0.113.9/p#x)"/></svg>'
    const svgUpload = await uploadFile(device, mtk, Buffer.from(evil), 'logo.svg', 'logo')
    const set = await post('SetLogo', { uploadId: svgUpload })
    expect(set.resData).toMatchObject({ custom: true, contentType: 'image/svg+xml', width: 40, height: 20 })
    expect(set.resData.removed).toEqual(['onload', '<script>', 'onclick', '<image>', 'fill with url(http://203.0.113.9/p#x)'])
    const served = await get('Logo')
    expect(served.headers.get('content-type')).toBe('image/svg+xml')
    expect(served.headers.get('content-security-policy')).toContain("default-src 'none'")
    const text = await served.text()
    expect(text).toBe('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#123456"/><circle cx="10" cy="10" r="5"/></svg>')

    const doctype = await uploadFile(device, mtk, Buffer.from('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>'), 'x.svg', 'logo')
    expect((await post('SetLogo', { uploadId: doctype })).resMsg[0]).toMatchObject({ messageKey: 'api.error.LogoInvalid', msgCode: '8121' })
    const notImage = await uploadFile(device, mtk, Buffer.from('hello, not a picture'), 'logo.png', 'logo')
    expect((await post('SetLogo', { uploadId: notImage })).resMsg[0]).toMatchObject({ messageKey: 'api.error.LogoInvalid', details: { reason: 'not a PNG, JPEG or SVG image' } })

    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#ff8800' } }).png().toBuffer()
    const pngSet = await post('SetLogo', { uploadId: await uploadFile(device, mtk, png, 'logo.png', 'logo') })
    expect(pngSet.resData).toMatchObject({ custom: true, contentType: 'image/png', width: 64, height: 48, sizeBytes: png.length, removed: [] })
    expect(Buffer.from(await (await get('Logo')).arrayBuffer())).toEqual(png)

    expect((await post('ResetLogo')).resData).toEqual(initial.resData)
    expect((await get('Logo')).headers.get('content-type')).toBe('image/svg+xml')
  })

  test('applies the log level and an area\'s debug switch to the running device', async () => {
    const settings = (await post('QueryDebugParam')).resData
    expect(settings.logLevel).toBe('info')
    expect(settings.areas).toContainEqual({ name: 'audio', debug: false })
    expect(settings.areas.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(['network', 'uploads', 'time', 'debug']))

    const column = (await device.post('/gtw/cwai/Audio/AddAudioColumn', { columnName: 'Probe', url: 'http://127.0.0.1:9/x', timeoutMs: 500 }, mtk)).body.resData
    const testColumn = () => device.post('/gtw/cwai/Audio/TestAudioColumn', { columnId: column.columnId }, mtk)
    const debugLines = () => device.logs.filter((l) => l.msg === 'testing audio column' && l.level === 20).length
    await testColumn()
    expect(debugLines()).toBe(0)
    expect((await post('SetDebugParam', { areas: { audio: true } })).resData.areas).toContainEqual({ name: 'audio', debug: true })
    await testColumn()
    for (let i = 0; i < 50 && debugLines() < 1; i++) await sleep(100)
    expect(debugLines()).toBe(1)
    await post('SetDebugParam', { areas: { audio: false } })
    await testColumn()
    await sleep(500)
    expect(debugLines()).toBe(1)

    // The root level: at warn, a request writes no access line; back at info it does.
    const accessLines = () => device.logs.filter((l) => l.msg === 'request' && l.path === '/gtw/cwai/System/QueryDebugParam').length
    await post('SetDebugParam', { logLevel: 'warn' })
    const quiet = accessLines()
    await post('QueryDebugParam')
    await sleep(500)
    expect(accessLines()).toBe(quiet)
    await post('SetDebugParam', { logLevel: 'info' })
    await post('QueryDebugParam')
    for (let i = 0; i < 50 && accessLines() === quiet; i++) await sleep(100)
    expect(accessLines()).toBe(quiet + 1)
    expect((await post('SetDebugParam', { areas: { nowhere: true } })).resMsg[0]).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field: '/areas/nowhere' } })
  })

  test('lists the log files and serves one with a single Range', async () => {
    const files = (await post('QueryLogFiles')).resData
    expect(files.total).toBeGreaterThanOrEqual(1)
    const active = files.rows.at(-1)
    expect(active).toMatchObject({ active: true })
    const part = await get(`DownloadLog?name=${active.name}`, { range: 'bytes=0-99' })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toMatch(/^bytes 0-99\/\d+$/)
    const head = Buffer.from(await part.arrayBuffer())
    const whole = Buffer.from(await (await get('DownloadLog')).arrayBuffer())
    expect(head).toEqual(whole.subarray(0, 100))
    expect(JSON.parse(whole.toString('utf8').split('\n')[0]!)).toHaveProperty('level')
    expect((await (await get('DownloadLog?name=device.999.log')).json()).resMsg[0].messageKey).toBe('api.error.LogFileNotFound')
    expect((await (await get('DownloadLog?name=../device.db')).json()).resMsg[0].messageKey).toBe('api.error.InvalidParam')
  })
})
