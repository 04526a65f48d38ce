/**
 * The typed client's algorithm-management calls (spec 4.10) against a scripted fetch: what each
 * sends, and how a file answer and a failure envelope come back. The real device is exercised
 * by test/console/algorithms.browser.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { DeviceClient, fileNameOf } from '../../runtime/client/client.ts'
import { DeviceError } from '../../runtime/client/errors.ts'
import { ROUTES } from '../../runtime/client/routes.ts'

type Sent = { url: string; headers: Record<string, string>; body: unknown }

/** A client whose fetch records the request and answers with `answer`. */
function scripted(answer: () => Response, onUnauthorized?: (route: string) => void) {
  const sent: Sent[] = []
  const client = new DeviceClient({
    baseUrl: 'http://device.test/', mtk: 'token-1', onUnauthorized,
    fetch: async (url, init) => {
      sent.push({ url: String(url), headers: init!.headers as Record<string, string>, body: JSON.parse(String(init!.body)) })
      return answer()
    },
  })
  return { client, sent }
}

const envelope = (resData: unknown) => new Response(JSON.stringify({ resCode: 1, resMsg: [], resultCode: '', resultMsg: '', resData }), { headers: { 'content-type': 'application/json' } })
const failure = (status: number, messageKey: string, details: Record<string, unknown>) => new Response(JSON.stringify({
  resCode: 0, resultCode: '', resultMsg: '',
  resMsg: [{ msgCode: '7303', messageKey, msgText: 'text', details, retryable: false, recommendedAction: 'NONE' }],
}), { status, headers: { 'content-type': 'application/json' } })

describe('device client: algorithm management (spec 4.10)', () => {
  it('lists layouts, deletes and installs with the mtk and the documented bodies', async () => {
    const { client, sent } = scripted(() => envelope({ total: 0, rows: [] }))
    expect(await client.algorithmLayoutList({ origin: 'package' })).toEqual({ total: 0, rows: [] })
    await client.algorithmDelete('site-helmets')
    await client.algorithmUpload({ uploadId: 'u-1', replace: true })
    expect(sent.map((s) => [s.url, s.body])).toEqual([
      [`http://device.test${ROUTES.algorithmLayoutList}`, { pageNum: 1, pageSize: 1000, origin: 'package' }],
      [`http://device.test${ROUTES.algorithmDelete}`, { algorithmId: 'site-helmets' }],
      [`http://device.test${ROUTES.algorithmUpload}`, { uploadId: 'u-1', replace: true }],
    ])
    expect(sent.every((s) => s.headers.mtk === 'token-1' && s.headers['content-type'] === 'application/json')).toBe(true)
  })

  it('answers an export as a Blob named by Content-Disposition', async () => {
    const bytes = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3])
    const { client, sent } = scripted(() => new Response(bytes, {
      headers: { 'content-type': 'application/zip', 'content-disposition': `attachment; filename="face_near.zip"; filename*=UTF-8''face%C2%B7near-1.0.0.zip` },
    }))
    const file = await client.algorithmExport('face-detection-near')
    expect(sent[0]!.body).toEqual({ algorithmId: 'face-detection-near' })
    expect(file.fileName).toBe('face·near-1.0.0.zip')
    expect(file.contentType).toBe('application/zip')
    expect(new Uint8Array(await file.blob.arrayBuffer())).toEqual(bytes)
  })

  it('throws the device error of a refused export, and reports a 401', async () => {
    const notFound = scripted(() => failure(200, 'api.error.AlgorithmNotFound', { algorithmId: 'nope' }))
    const refused = await notFound.client.algorithmExport('nope').catch((e) => e)
    expect(refused).toBeInstanceOf(DeviceError)
    expect(refused.messageKey).toBe('api.error.AlgorithmNotFound')
    expect(refused.item.details).toEqual({ algorithmId: 'nope' })

    const unauthorized: string[] = []
    const expired = scripted(() => failure(401, 'api.error.Unauthorized', {}), (route) => unauthorized.push(route))
    expect((await expired.client.algorithmExport('x').catch((e) => e)).status).toBe(401)
    expect(unauthorized).toEqual([ROUTES.algorithmExport])
  })

  it('reads file names from Content-Disposition, never a folder', () => {
    expect(fileNameOf(`attachment; filename="a.zip"; filename*=UTF-8''b%20c.zip`)).toBe('b c.zip')
    expect(fileNameOf('attachment; filename="quoted \\"name\\".zip"')).toBe('quoted "name".zip')
    expect(fileNameOf('attachment; filename=plain.tar.gz')).toBe('plain.tar.gz')
    expect(fileNameOf(`attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd`)).toBe('passwd')
    expect(fileNameOf('attachment; filename="C:\\\\temp\\\\x.zip"')).toBe('x.zip')
    expect(fileNameOf('attachment')).toBeNull()
    expect(fileNameOf(null)).toBeNull()
  })
})

describe('device client: cameras, stream tasks and pictures (spec 4.9, 4.10)', () => {
  it('sends the documented bodies for camera deletion and task batches', async () => {
    const { client, sent } = scripted(() => envelope({ rows: [{ taskId: 't-1', ok: true, messageKey: null }] }))
    await client.cameraDelete('cam-1', true)
    expect(await client.streamTaskBatch('stop', ['t-1'])).toEqual({ rows: [{ taskId: 't-1', ok: true, messageKey: null }] })
    await client.streamTaskPage({ cameraId: 'cam-1' })
    expect(sent.map((s) => [s.url, s.body])).toEqual([
      [`http://device.test${ROUTES.cameraDelete}`, { cameraId: 'cam-1', force: true }],
      [`http://device.test${ROUTES.streamTaskBatch}`, { action: 'stop', taskIds: ['t-1'] }],
      [`http://device.test${ROUTES.streamTaskPage}`, { pageNum: 1, pageSize: 500, cameraId: 'cam-1' }],
    ])
  })

  it('fetches a picture by URL with the mtk from the device only, never sending the session elsewhere', async () => {
    const gets: { url: string; headers: Record<string, string> }[] = []
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xd9])
    const client = new DeviceClient({
      baseUrl: 'http://device.test', mtk: 'token-1',
      fetch: async (url, init) => {
        gets.push({ url: String(url), headers: init!.headers as Record<string, string> })
        return String(url).includes('missing')
          ? failure(404, 'api.error.PictureNotFound', { id: 'missing' })
          : new Response(jpeg, { headers: { 'content-type': 'image/jpeg' } })
      },
    })
    const own = await client.picture('/gtw/cwai/File/FullPicture?id=a')
    expect(new Uint8Array(await own.arrayBuffer())).toEqual(jpeg)
    await client.picture('http://device.test/gtw/cwai/File/FullPicture?id=b')
    await client.picture('http://files.example/pictures/c.jpg')
    expect(gets).toEqual([
      { url: 'http://device.test/gtw/cwai/File/FullPicture?id=a', headers: { mtk: 'token-1' } },
      { url: 'http://device.test/gtw/cwai/File/FullPicture?id=b', headers: { mtk: 'token-1' } },
      { url: 'http://files.example/pictures/c.jpg', headers: {} },
    ])
    const refused = await client.picture('/gtw/cwai/File/FullPicture?id=missing').catch((e) => e)
    expect(refused).toBeInstanceOf(DeviceError)
    expect(refused.messageKey).toBe('api.error.PictureNotFound')
  })
})
