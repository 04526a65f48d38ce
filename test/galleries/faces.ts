import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import sharp from 'sharp'
import type { Target } from '../../shared/inference/types.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { samplePath } from '../inference/helpers.ts'

export type Box = Target['box']
export interface SamplePhoto { bytes: Buffer; size: { width: number; height: number }; faces: Box[] }

export const targetsOf = (resData: any): Target[] => resData.areaList.flatMap((a: { targetList: Target[] }) => a.targetList)

/** sampleN.jpg with the boxes the face-detection algorithm finds in it, left to right. */
export async function samplePhoto(device: DeviceProcess, mtk: string, n: number): Promise<SamplePhoto> {
  const taskId = randomUUID()
  await device.post('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) }, mtk)
  const bytes = readFileSync(samplePath(n))
  const meta = await sharp(bytes).metadata()
  const found = await device.post('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-detection', imageBase64: bytes.toString('base64') }, mtk)
  if (found.body.resCode !== 1) throw new Error(JSON.stringify(found.body.resMsg))
  await device.post('/gtw/cwai/aihost/PTaskCancle', { taskId, algorithmCode: 'face-detection' }, mtk)
  return { bytes, size: { width: meta.width!, height: meta.height! }, faces: targetsOf(found.body.resData).map((t) => t.box).sort((a, b) => a.x - b.x) }
}

/** Face `i` of the photo with a margin of half its box each side (the detector needs some context), as JPEG. */
export function cropFace(photo: SamplePhoto, i: number): Promise<Buffer> {
  const box = photo.faces[i]!
  const left = Math.max(0, Math.round(box.x - box.width / 2)), top = Math.max(0, Math.round(box.y - box.height / 2))
  const width = Math.min(photo.size.width - left, box.width * 2), height = Math.min(photo.size.height - top, box.height * 2)
  return sharp(photo.bytes).extract({ left, top, width: Math.round(width), height: Math.round(height) }).jpeg({ quality: 92 }).toBuffer()
}

/** A face gallery `staff` holding one person, `p1` named Alice, with `face` (a JPEG) as her picture. */
export async function enrollAlice(device: DeviceProcess, mtk: string, face: Buffer): Promise<void> {
  const steps: [string, unknown][] = [
    ['/gtw/cwai/Library/AddLibrary', { galleryId: 'staff', name: 'Staff' }],
    ['/gtw/cwai/Library/AddPerson', { galleryId: 'staff', personId: 'p1', name: 'Alice' }],
    ['/gtw/cwai/Library/AddPersonImage', { galleryId: 'staff', personId: 'p1', imageBase64: face.toString('base64') }],
  ]
  for (const [route, body] of steps) {
    const answer = (await device.post(route, body, mtk)).body
    if (answer.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(answer.resMsg)}`)
  }
}
