/**
 * Enrolment quality measures (docs/galleries.md "Enrolment quality") on every face of the
 * labelled photos (shared/media/faces) and face-api's six sample photos: eye distance in
 * pixels, turn (runtime/galleries/face-quality.ts) and sharpness of the stored chip. Prints one
 * line per face and the minimum / maximum of each measure: the limits must refuse none of them.
 * Run: `node build.mjs && npx tsx bench/face-quality.ts` (figures to bench/out/face-quality.json).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { InferenceEngine } from '../runtime/sidecar/engine.ts'
import { faceQuality, type FaceQuality } from '../runtime/galleries/face-quality.ts'

const root = path.resolve(import.meta.dirname, '..')
const facesDir = path.resolve(root, '../shared/media/faces')
const samples = path.join(root, 'node_modules/@vladmandic/face-api/demo')

async function main() {
  const engine = new InferenceEngine({ projectRoot: root, intraOpThreads: 2, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })
  const files = [
    ...readdirSync(facesDir).filter((f) => f.endsWith('.jpg')).map((f) => path.join(facesDir, f)),
    ...[1, 2, 3, 4, 5, 6].map((n) => path.join(samples, `sample${n}.jpg`)),
  ]
  const rows: ({ file: string; face: number } & FaceQuality)[] = []
  for (const file of files) {
    const regions = await engine.describe({ algorithmId: 'face-recognition', image: { kind: 'bytes', bytes: readFileSync(file) }, pictures: true })
    for (const [i, r] of regions.entries()) {
      const q = await faceQuality(r)
      rows.push({ file: path.basename(file), face: i, ...q })
      console.log(JSON.stringify(rows.at(-1)))
    }
  }
  const range = (k: 'eyeDistancePx' | 'turn' | 'sharpness') => ({ min: Math.min(...rows.map((r) => r[k])), max: Math.max(...rows.map((r) => r[k])) })
  const summary = { faces: rows.length, eyeDistancePx: range('eyeDistancePx'), turn: range('turn'), sharpness: range('sharpness') }
  console.log(JSON.stringify(summary))
  mkdirSync(path.join(root, 'bench/out'), { recursive: true })
  writeFileSync(path.join(root, 'bench/out/face-quality.json'), JSON.stringify({ summary, rows }, null, 1) + '\n')
  await engine.close()
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
