/**
 * Face recognition on the labelled people of shared/media/faces over HTTP (docs/galleries.md
 * "Threshold"): one photo of each person (the first in labels.csv) enrolled with
 * AddPersonImage, then each of their other photos and each stranger's photo through
 * PTaskDetectPic with face-recognition at the default threshold, and through SearchByImage.
 * The truth is labels.csv; the rule (spec 2.4, docs/galleries.md "Face galleries") is that a
 * face is named after its best person when that similarity reaches the threshold, else
 * `unknown`.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'
import type { DeviceProcess } from '../helpers/device.ts'
import { targetsOf } from './faces.ts'

const projectRoot = path.resolve(import.meta.dirname, '../..')
const facesDir = path.resolve(projectRoot, '../shared/media/faces')
const manifest = JSON.parse(readFileSync(path.join(projectRoot, 'models/manifests/face-recognition.json'), 'utf8'))
/** The recognizer's default threshold (the manifest's `scoreThreshold`). */
const THRESHOLD: number = manifest.nodes.find((n: { action: string }) => n.action === 'recognizer').scoreThreshold
const labels = readFileSync(path.join(facesDir, 'labels.csv'), 'utf8').trim().split('\n').slice(1).map((l) => {
  const [file, identity] = l.split(',')
  return { file: file!.trim(), identity: (identity ?? '').trim() }
})
const people = [...new Set(labels.map((l) => l.identity).filter(Boolean))]
const enrolled = people.map((p) => labels.find((l) => l.identity === p)!)
const probes = labels.filter((l) => l.identity && !enrolled.includes(l))
const strangers = labels.filter((l) => !l.identity)
const area = (t: { box: { width: number; height: number } }) => t.box.width * t.box.height

test.describe('labelled people: one photo enrolled each, the others recognised over HTTP', () => {
  let device: DeviceProcess
  let mtk: string
  let taskId: string
  const galleryId = `people-${randomUUID().slice(0, 8)}`
  const ok = async (route: string, body: unknown) => {
    const answer = (await device.post(route, body, mtk)).body
    expect(answer.resCode, `${route}: ${JSON.stringify(answer.resMsg)}`).toBe(1)
    return answer.resData
  }
  const image = (file: string) => readFileSync(path.join(facesDir, file)).toString('base64')
  /** The largest face's recognition item (`confidence[1]`) in PTaskDetectPic. */
  const recognised = async (file: string) => {
    const face = targetsOf(await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId, algorithmCode: 'face-recognition', imageBase64: image(file) })).sort((a, b) => area(b) - area(a))[0]
    expect(face, `${file}: a face`).toBeDefined()
    return face!.confidence[1]!
  }
  /** Every enrolled person's similarity to the photo's largest face, best first. */
  const searched = async (file: string): Promise<{ personId: string; name: string; similarity: number }[]> => {
    const { faces } = await ok('/gtw/cwai/Library/SearchByImage', { galleryId, imageBase64: image(file), topK: people.length })
    return faces.sort((a: any, b: any) => area(b) - area(a))[0].matches
  }

  test.beforeAll(async ({ device: started, mtk: session }) => {
    device = started
    mtk = session
    await ok('/gtw/cwai/Library/AddLibrary', { galleryId, name: 'Labelled people' })
    for (const { file, identity } of enrolled) {
      await ok('/gtw/cwai/Library/AddPerson', { galleryId, personId: `p-${identity}`, name: `Person ${identity}` })
      await ok('/gtw/cwai/Library/AddPersonImage', { galleryId, personId: `p-${identity}`, imageBase64: image(file) })
    }
    taskId = randomUUID()
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId, algorithmCode: 'face-recognition', algorithmUpdateTime: String(Date.now()), taskConfig: { recognition: { galleryIds: [galleryId] } } })
  }, 240_000)

  test('each enrolled person\'s other photo finds that person first, is named exactly when the similarity reaches the threshold, and never wrongly', async () => {
    expect(probes).toHaveLength(19)
    for (const { file, identity } of probes) {
      const matches = await searched(file)
      expect(matches.map((m) => m.personId).sort(), file).toEqual(people.map((p) => `p-${p}`).sort())
      expect(matches[0]!.personId, file).toBe(`p-${identity}`)
      // The task's own similarity: its detection decodes the photo at the detector's size
      // (docs/detection.md "Decoding at the model's size"), the search in full, so the face's
      // box, and the similarity with it, can differ slightly between the two.
      const item = await recognised(file)
      const similarity = item.label === 'unknown' ? 1 - item.confidence : item.confidence
      expect(Math.abs(similarity - matches[0]!.similarity), file).toBeLessThan(0.01)
      expect(item.label, file).toBe(similarity >= THRESHOLD ? `Person ${identity}` : 'unknown')
    }
  }, 240_000)

  test('at the default threshold at least 16 of the 19 are named: all but person B\'s three hardest photos', async () => {
    // B's enrolled photo (the first in labels.csv, stock-emotions-b-1) is a grimace with the eyes
    // shut; B's photos with the tongue out (b-3), a hand on the cheek (b-5) and the head turned
    // (b-7) differ from it most and lie at the level of the closest stranger (docs/galleries.md
    // "Threshold"): the default leaves them unknown rather than name a stranger. Every other
    // enrolled person's photo (A, C, D and B's other four) is expected named.
    const hardest = ['stock-emotions-b-3.jpg', 'stock-emotions-b-5.jpg', 'stock-emotions-b-7.jpg']
    expect(probes.filter((p) => hardest.includes(p.file))).toHaveLength(3)
    const named = []
    for (const { file, identity } of probes) if ((await recognised(file)).label === `Person ${identity}`) named.push(file)
    expect(named.length).toBeGreaterThanOrEqual(probes.length - hardest.length)
    for (const { file } of probes) if (!hardest.includes(file)) expect(named, file).toContain(file)
  }, 240_000)

  test('no stranger is named: each one\'s best similarity stays below the threshold and the task says unknown', async () => {
    expect(strangers).toHaveLength(12)
    for (const { file } of strangers) {
      const matches = await searched(file)
      expect(matches[0]!.similarity, file).toBeLessThan(THRESHOLD)
      expect((await recognised(file)).label, file).toBe('unknown')
    }
  }, 240_000)
})
