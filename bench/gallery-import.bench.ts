/**
 * Face-import throughput (docs/galleries.md "File import"): faces per second of an import job on the
 * real runtime — an archive of face images with a manifest, uploaded with purpose
 * `face-import`, imported by `/gtw/cwai/File/ImportFiles`, timed from the job's start to its
 * last row by polling `ImportStatus` — against the raw detect + describe pipeline in process
 * (the `face-recognition` pipeline through the bundled `InferenceEngine`, as the sidecar runs
 * it, with the aligned-face picture) on the same images. Rounds alternate (raw, job, raw,
 * job, …) so both sides see the same load on the shared machine; the medians of the rounds
 * are the figure and its baseline (each round's ratio in details). Target: the job ≥ 0.8 × the
 * raw pipeline.
 *
 *   node build.mjs && npx tsx bench/gallery-import.bench.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { uploadFile } from '../test/helpers/upload-file.ts'
import { zipOf } from '../test/helpers/zip.ts'
import { loadBundledEngine } from './lib/bundled-engine.ts'
import { startBenchDevice } from './lib/device-process.ts'
import { figure, writeReport } from './lib/report.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const ROUNDS = 5
/** ImportStatus polling: each poll is an HTTP request and a query the device serves beside the job (a finish is seen up to this late: counted against the job). */
const POLL_MS = 100
/** Each sample face at these scales: distinct images (an import skips an image it already has). */
const SCALES = [1, 0.85, 0.7]

const { InferenceEngine } = await loadBundledEngine()
const engine = new InferenceEngine({ projectRoot: ROOT, intraOpThreads: 2, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })

/**
 * Every face of the six sample photos, cut out with half its box as margin, at each scale;
 * a cut-out that also holds part of a neighbour's face (2 found) is left out.
 */
async function faceImages(): Promise<Buffer[]> {
  const images: Buffer[] = []
  for (let n = 1; n <= 6; n++) {
    const file = path.join(ROOT, 'node_modules/@vladmandic/face-api/demo', `sample${n}.jpg`)
    const meta = await sharp(file).metadata()
    for (const face of await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'path', path: file } })) {
      const b = face.box
      const left = Math.max(0, Math.round(b.x - b.width / 2)), top = Math.max(0, Math.round(b.y - b.height / 2))
      const width = Math.min(meta.width! - left, b.width * 2), height = Math.min(meta.height! - top, b.height * 2)
      for (const scale of SCALES) {
        const bytes = await sharp(file).extract({ left, top, width, height }).resize(Math.round(width * scale)).jpeg({ quality: 90 }).toBuffer()
        if ((await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes } })).length === 1) images.push(bytes)
      }
    }
  }
  return images
}

const images = await faceImages()
const dir = mkdtempSync(path.join(os.tmpdir(), 'gallery-import-bench-'))
const files = images.map((bytes, i) => { const file = path.join(dir, `face-${i}.jpg`); writeFileSync(file, bytes); return file })
const archive = await zipOf({
  'manifest.csv': ['personId,name,file', ...images.map((_, i) => `p${i},Person ${i},faces/face-${i}.jpg`)].join('\n'),
  ...Object.fromEntries(images.map((bytes, i) => [`faces/face-${i}.jpg`, bytes])),
})

/** The raw pipeline: each image described in turn, with the picture an import stores. */
async function rawRound(): Promise<number> {
  const started = performance.now()
  let faces = 0
  for (const file of files) faces += (await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'path', path: file }, pictures: true })).length
  if (faces !== files.length) throw new Error(`raw pipeline: ${faces} faces in ${files.length} images`)
  return faces / ((performance.now() - started) / 1000)
}

const device = await startBenchDevice()
const raw: number[] = [], job: number[] = []
const jobDetails: unknown[] = []
try {
  const mtk = await device.signIn()
  const post = async (route: string, body: unknown) => {
    const answer = await (await fetch(`${device.url}${route}`, { method: 'POST', headers: { mtk, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as { resCode: number; resData: any; resMsg: unknown }
    if (answer.resCode !== 1) throw new Error(`${route}: ${JSON.stringify(answer.resMsg)}`)
    return answer.resData
  }
  /** One import into a fresh gallery: faces per second from the job's start to its end. */
  const jobRound = async (round: number): Promise<number> => {
    const galleryId = `bench-${round}`
    await post('/gtw/cwai/Library/AddLibrary', { galleryId, name: galleryId })
    const uploadId = await uploadFile(device, mtk, archive, 'faces.zip', 'face-import')
    const started = performance.now()
    const { jobId } = await post('/gtw/cwai/File/ImportFiles', { galleryId, uploadId })
    for (let polls = 0; polls < 3000; polls++) {
      const status = await post('/gtw/cwai/File/ImportStatus', { jobId })
      if (status.state !== 'running') {
        const seconds = (performance.now() - started) / 1000
        jobDetails.push({ round, state: status.state, imported: status.imported, failed: status.failed, seconds })
        if (status.state !== 'done' || status.imported !== images.length) throw new Error(`import ended ${status.state} with ${status.imported} of ${images.length}: ${JSON.stringify(status.errors.slice(0, 3))} ${JSON.stringify(status.error)}`)
        return status.imported / seconds
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
    throw new Error('import did not finish')
  }
  // Warm both sides (model sessions, first describe) before measuring.
  await rawRound()
  await jobRound(0)
  for (let round = 1; round <= ROUNDS; round++) {
    raw.push(await rawRound())
    job.push(await jobRound(round))
  }
} finally {
  await device.stop()
  await engine.close()
  rmSync(dir, { recursive: true, force: true })
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
await writeReport({
  benchmark: 'gallery-import',
  description: 'Faces per second of a face-import job (zip + manifest.csv, ImportFiles → ImportStatus done) vs the raw face-recognition pipeline in process on the same images',
  settings: { faces: images.length, archiveBytes: archive.length, rounds: ROUNDS, scales: SCALES, pollMs: POLL_MS },
  figures: [figure({
    name: 'import throughput', unit: 'faces/s', value: median(job),
    baseline: { name: 'raw detect + describe in process', value: median(raw) },
    target: { ratioAtLeast: 0.8 },
  })],
  details: { rawRounds: raw, jobRounds: job, roundRatios: job.map((v, i) => v / raw[i]!), jobs: jobDetails, loadAverage: os.loadavg() },
})
