import { randomUUID } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { samplePath } from './helpers.ts'

const sample1 = readFileSync(samplePath(1))
/**
 * How long a URL stays valid, counted from the end of its detection: ample for the tests that fetch
 * (and render) right after detecting, short for the one that waits it out.
 */
const RETENTION_MS = 3000

test.override('deviceOptions', { env: { FILE_SERVICE_BASE_URL: 'http://device.example:8080', FULL_PICTURE_RETENTION_MS: String(RETENTION_MS) } })

test.describe('fullPicture URL mode (spec 2.6): the overlay is rendered when the URL is first fetched', () => {
  let device: DeviceProcess
  let mtk: string
  const taskId = randomUUID()
  const pictures = () => path.join(device.dataDir, 'pictures')
  const detect = (body: Record<string, unknown>) => device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', ...body }, mtk)
  const fetchPicture = (url: string) => { const u = new URL(url); return fetch(device.url + u.pathname + u.search, { headers: { mtk } }) }
  const idOf = (url: string) => new URL(url).searchParams.get('id')!
  const upload = async (data: Buffer) => {
    const form = new FormData()
    const fields = { purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: data.length, chunkSize: data.length, clientRequestId: randomUUID() }
    for (const [name, value] of Object.entries(fields)) form.append(name, String(value))
    form.append('file', new Blob([new Uint8Array(data)]), 'photo.jpg')
    const body = await (await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })).json() as any
    return body.resData.uploadId as string
  }

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    const created = await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
    expect(created.body.resCode).toBe(1)
  }, 180_000)

  test('answers the URL without rendering; the first fetch renders the boxes once, later fetches serve the same file', async () => {
    const answer = await detect({ imageBase64: sample1.toString('base64') })
    expect(answer.body.resCode).toBe(1)
    const faces = answer.body.resData.areaList[0].targetList
    expect(faces).toHaveLength(3)
    const id = idOf(answer.body.resData.fullPicture)
    // Kept for the overlay: the image as received and the result; no JPEG rendered yet.
    expect(readdirSync(pictures()).filter((n) => n.startsWith(id)).sort()).toEqual([`${id}.json`, `${id}.src`])
    expect(readFileSync(path.join(pictures(), `${id}.src`)).equals(sample1)).toBe(true)

    // Two first fetches at once: one render, the same picture for both.
    const [first, second] = await Promise.all([fetchPicture(answer.body.resData.fullPicture), fetchPicture(answer.body.resData.fullPicture)])
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    const jpeg = Buffer.from(await first.arrayBuffer())
    expect(Buffer.from(await second.arrayBuffer()).equals(jpeg)).toBe(true)
    expect(readdirSync(pictures()).filter((n) => n.startsWith(id))).toEqual([`${id}.jpg`])
    const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true })
    expect(info).toMatchObject({ width: 1920, height: 1280 })
    // The first face's left edge is drawn in the box colour (#00e060), the original photo is not that green there.
    const box = faces[0].box
    const at = (x: number, y: number) => [...data.subarray((y * 1920 + x) * 3, (y * 1920 + x) * 3 + 3)]
    const [r, g, b] = at(box.x, box.y + (box.height >> 1))
    expect(g).toBeGreaterThan(180)
    expect(r).toBeLessThan(80)
    expect(b).toBeLessThan(140)
    const again = await fetchPicture(answer.body.resData.fullPicture)
    expect(Buffer.from(await again.arrayBuffer()).equals(jpeg)).toBe(true)
  })

  test('keeps an uploaded image after its upload is consumed; the task overview is that picture', async () => {
    const answer = await detect({ uploadId: await upload(sample1) })
    expect(answer.body.resCode).toBe(1)
    const overview = await device.post('/v1/cwai/aihost/QueryTaskOverviewFile', { taskId }, mtk)
    expect(overview.status).toBe(200)
    const info = await device.post('/v1/cwai/aihost/QueryTaskInfo', { taskId }, mtk)
    expect(info.body.resData.overviewAvailable).toBe(true)
    const picture = await fetchPicture(answer.body.resData.fullPicture)
    expect(picture.status).toBe(200)
    expect(await sharp(Buffer.from(await picture.arrayBuffer())).metadata()).toMatchObject({ format: 'jpeg', width: 1920, height: 1280 })
  })

  test('a URL stays valid for FULL_PICTURE_RETENTION_MS after its detection, fetched or not', async () => {
    const fetched = await detect({ imageBase64: sample1.toString('base64') })
    const unfetched = await detect({ imageBase64: sample1.toString('base64') })
    expect((await fetchPicture(fetched.body.resData.fullPicture)).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, RETENTION_MS + 200))
    for (const url of [fetched.body.resData.fullPicture, unfetched.body.resData.fullPicture]) {
      const gone = await fetchPicture(url)
      expect(gone.status).toBe(404)
      expect((await gone.json()).resMsg[0].messageKey).toBe('api.error.PictureNotFound')
    }
    expect(existsSync(path.join(pictures(), `${idOf(unfetched.body.resData.fullPicture)}.src`))).toBe(false)
  })
})
