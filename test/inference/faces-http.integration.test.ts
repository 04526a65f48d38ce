import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import sharp from 'sharp'
import { expect } from 'vitest'
import { compareTargets, MAX_LANDMARK_SHIFT, MIN_IOU } from '../../bench/lib/shrink-accuracy.ts'
import { decodeImage } from '../../runtime/sidecar/image/decode.ts'
import type { Target } from '../../shared/inference/types.ts'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { bgrRows, writeBmp } from './bmp-writer.ts'
import { limits, samplePath, samplePeople } from './helpers.ts'

const inside = (t: Target) => t.landmark.every((p) =>
  p.xRatio >= t.box.x && p.xRatio <= t.box.x + t.box.width && p.yRatio >= t.box.y && p.yRatio <= t.box.y + t.box.height)

// The face algorithm through the typical flow of spec 1 (upload, then detect by uploadId).
test.describe('face detection over HTTP on the six group photos', () => {
  let device: DeviceProcess
  let mtk: string
  const taskId = randomUUID()
  /** spec 4.5: one single-chunk uploadTemp; returns the uploadId. */
  const upload = async (data: Buffer, filename: string) => {
    const form = new FormData()
    const fields = { purpose: 'image', chunkIndex: 0, totalChunks: 1, totalSize: data.length, chunkSize: data.length, clientRequestId: randomUUID() }
    for (const [name, value] of Object.entries(fields)) form.append(name, String(value))
    form.append('file', new Blob([new Uint8Array(data)]), filename)
    const body = await (await fetch(`${device.url}/gtw/cwai/atomic/model/uploadTemp`, { method: 'POST', headers: { mtk }, body: form })).json() as any
    if (body.resCode !== 1 || body.resData.complete !== true) throw new Error(JSON.stringify(body))
    return body.resData.uploadId as string
  }
  const facesOf = async (data: Buffer, filename: string): Promise<Target[]> => {
    const uploadId = await upload(data, filename)
    const result = await device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', uploadId }, mtk)
    expect(result.body.resCode, JSON.stringify(result.body.resMsg)).toBe(1)
    return result.body.resData.areaList.flatMap((a: { targetList: Target[] }) => a.targetList)
  }

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    const created = await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
    expect(created.body.resCode).toBe(1)
  })

  test('finds at least 21 of the 22 faces, never more boxes than people, every box holding its landmarks', async () => {
    let found = 0
    for (const [i, people] of samplePeople.entries()) {
      const name = `sample${i + 1}.jpg`
      const faces = await facesOf(readFileSync(samplePath(i + 1)), name)
      expect(faces.length, name).toBeLessThanOrEqual(people)
      found += faces.length
      for (const face of faces) {
        expect(face.confidence[0]!.label).toBe('face')
        expect(face.landmark, name).toHaveLength(6)
        expect(inside(face), `landmarks inside the box on ${name}`).toBe(true)
      }
    }
    expect(found).toBeGreaterThanOrEqual(21)
  })

  test('sample1 as a V5 BMP (as ImageMagick writes it) gives the same 3 faces as the JPEG', async () => {
    const jpeg = await decodeImage({ kind: 'path', path: samplePath(1) }, limits)
    const bmp = writeBmp({ width: jpeg.width, height: jpeg.height, bitsPerPixel: 24, headerSize: 124, rows: bgrRows(jpeg.data, jpeg.width, jpeg.height) })
    const fromBmp = await facesOf(bmp, 'sample1.bmp')
    expect(fromBmp).toHaveLength(3)
    const fromJpeg = await facesOf(readFileSync(samplePath(1)), 'sample1.jpg')
    // The BMP holds the JPEG's fully decoded pixels; the JPEG itself is decoded at BlazeFace's
    // size (docs/detection.md "Decoding at the model's size"): the same faces, one to one.
    const same = compareTargets(fromBmp, fromJpeg)
    expect(same.ious.every((iou) => iou >= MIN_IOU) && same.landmarkShift <= MAX_LANDMARK_SHIFT, JSON.stringify(same)).toBe(true)
    expect(same.holds).toBe(true)
    for (const face of fromBmp) expect(inside(face)).toBe(true)
  })

  test('a phone photo stored sideways with EXIF orientation 6 is analysed upright: the same faces as the upright JPEG', async () => {
    // Orientation 6 = "rotate 90° clockwise to display": the pixels are the photo turned 90° counter-clockwise.
    const sideways = await sharp(samplePath(1)).rotate(-90).jpeg({ quality: 92 }).withMetadata({ orientation: 6 }).toBuffer()
    expect(await sharp(sideways).metadata()).toMatchObject({ width: 1280, height: 1920, orientation: 6 })
    const fromSideways = await facesOf(sideways, 'portrait.jpg')
    const fromJpeg = await facesOf(readFileSync(samplePath(1)), 'sample1.jpg')
    expect(fromSideways).toHaveLength(fromJpeg.length)
    fromSideways.forEach((face, i) => {
      const upright = fromJpeg[i]!.box
      // Same place in the upright photo (a second JPEG generation moves a box by a few pixels).
      expect(Math.abs(face.box.x - upright.x) + Math.abs(face.box.y - upright.y), `face ${i}`).toBeLessThan(24)
    })
  })
})
