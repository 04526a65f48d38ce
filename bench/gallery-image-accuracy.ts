/**
 * Body and things gallery accuracy (docs/galleries.md "Body and things galleries"): items are registered
 * from one picture each, then changed copies of that picture (mirror, an 80 % crop, JPEG
 * quality 30) are described the way the device describes a search image and compared with
 * every registered item; the rate is how often the right item comes first. Pictures: the six
 * sample photos of @vladmandic/face-api and frames of ../shared/media (people walking into an
 * office, a street with cars).
 *
 * - body: every person the `body-recognition` pipeline finds (CenterNet, person box → image
 *   descriptor) is an item; a person standing at the same place in the next frames of the
 *   video is the same person and is registered once. The copy is of the whole picture (the
 *   crop keeps the person's centre where it can); the person is found again by the detector.
 * - things (`things-recognition`, the whole picture described): objects the COCO detector
 *   finds (not persons) cut out of the pictures, 4 × 4 tiles of the sample photos (parts of
 *   rooms, furniture, clothing), and whole video frames every 15 s (scenes of one fixed camera:
 *   near-duplicates of each other, the hard case).
 *
 * Figures (rates per change and group, similarities of the right item and of the best wrong
 * one) in bench/out/gallery-image-accuracy.json.
 *
 *   node build.mjs && npx tsx bench/gallery-image-accuracy.ts
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { InferenceEngine } from '../runtime/sidecar/engine.ts'
import type { DescribedRegion } from '../shared/galleries/types.ts'
import type { TargetBox } from '../shared/inference/types.ts'

const root = path.resolve(import.meta.dirname, '..')
const media = path.resolve(root, '../shared/media')
const THRESHOLDS = [0.9, 0.95, 0.97, 0.98]

interface Picture { name: string; bytes: Buffer; width: number; height: number; frame?: { video: string; index: number } }
interface Item { id: string; group: string; picture: Picture; box: TargetBox; descriptor: Float32Array }
type Box = TargetBox

const dot = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!; return s }
const iou = (a: Box, b: Box) => {
  const w = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)), h = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y))
  return (w * h) / (a.width * a.height + b.width * b.height - w * h)
}
const percentile = (values: number[], p: number) => { const s = [...values].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? null }
const round = (v: number | null) => (v === null ? null : Math.round(v * 1e4) / 1e4)

async function pictures(): Promise<Picture[]> {
  const out: Picture[] = []
  const add = async (name: string, file: string, frame?: Picture['frame']) => {
    const bytes = await sharp(file).jpeg({ quality: 95 }).toBuffer()
    const meta = await sharp(bytes).metadata()
    out.push({ name, bytes, width: meta.width!, height: meta.height!, ...(frame ? { frame } : {}) })
  }
  for (let n = 1; n <= 6; n++) await add(`sample${n}`, path.join(root, 'node_modules/@vladmandic/face-api/demo', `sample${n}.jpg`))
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gallery-frames-'))
  try {
    // people: a frame every 3 s; cars: every second (they pass quickly)
    for (const [video, fps] of [['one-by-one-person-detection', '1/3'], ['car-detection', '1']] as const) {
      execFileSync('ffmpeg', ['-v', 'error', '-i', path.join(media, `${video}.mp4`), '-vf', `fps=${fps}`, '-q:v', '2', path.join(dir, `${video}-%03d.jpg`)])
      for (const file of readdirSync(dir).filter((f) => f.startsWith(video)).sort())
        await add(file, path.join(dir, file), { video, index: Number(/-(\d+)\.jpg$/.exec(file)![1]) })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return out
}

/** The same object at the same place in one of the three frames before is not a new item. */
const seenBefore = (items: { picture: Picture; box: Box }[], picture: Picture, box: Box) => picture.frame !== undefined && items.some((i) =>
  i.picture.frame?.video === picture.frame!.video && i.picture.frame.index < picture.frame!.index && picture.frame!.index - i.picture.frame.index <= 3 && iou(i.box, box) > 0.2)

const crop = (p: Picture, b: Box) => {
  const left = Math.max(0, Math.floor(b.x)), top = Math.max(0, Math.floor(b.y))
  return sharp(p.bytes).extract({ left, top, width: Math.min(p.width - left, Math.ceil(b.width)), height: Math.min(p.height - top, Math.ceil(b.height)) }).jpeg({ quality: 95 }).toBuffer()
}

/** A changed copy of a picture, and where a box of the original lies in it. */
interface Change { name: string; apply(p: Picture, keep: Box): Promise<{ bytes: Buffer; map(b: Box): Box }> }
const changes: Change[] = [
  { name: 'mirror', apply: async (p) => ({ bytes: await sharp(p.bytes).flop().jpeg({ quality: 95 }).toBuffer(), map: (b) => ({ ...b, x: p.width - b.x - b.width }) }) },
  {
    name: 'crop 80 %',
    apply: async (p, keep) => {
      // 80 % of each side, placed to keep the item's centre (the middle for a whole picture)
      const width = Math.round(p.width * 0.8), height = Math.round(p.height * 0.8)
      const left = Math.round(Math.min(Math.max(0, keep.x + keep.width / 2 - width / 2), p.width - width))
      const top = Math.round(Math.min(Math.max(0, keep.y + keep.height / 2 - height / 2), p.height - height))
      return { bytes: await sharp(p.bytes).extract({ left, top, width, height }).jpeg({ quality: 95 }).toBuffer(), map: (b) => ({ ...b, x: b.x - left, y: b.y - top }) }
    },
  },
  { name: 'jpeg 30', apply: async (p) => ({ bytes: await sharp(p.bytes).jpeg({ quality: 30 }).toBuffer(), map: (b) => b }) },
]

async function picture(bytes: Buffer, name: string): Promise<Picture> {
  const meta = await sharp(bytes).metadata()
  return { name, bytes, width: meta.width!, height: meta.height! }
}

async function bodyItems(engine: InferenceEngine, all: Picture[]): Promise<Item[]> {
  const items: Item[] = []
  for (const p of all)
    for (const region of await engine.describe({ algorithmId: 'body-recognition', image: { kind: 'bytes', bytes: p.bytes } }))
      if (region.box.height >= 64 && !seenBefore(items, p, region.box))
        items.push({ id: `${p.name} person at ${region.box.x},${region.box.y}`, group: p.frame ? 'video frame' : 'sample photo', picture: p, box: region.box, descriptor: region.descriptor })
  return items
}

async function thingsItems(engine: InferenceEngine, all: Picture[]): Promise<Item[]> {
  const items: Item[] = []
  const whole = async (p: Picture, group: string) => {
    const [region] = await engine.describe({ algorithmId: 'things-recognition', image: { kind: 'bytes', bytes: p.bytes } })
    items.push({ id: p.name, group, picture: p, box: { x: 0, y: 0, width: p.width, height: p.height }, descriptor: region!.descriptor })
  }
  await engine.load('objects', 'object-detection')
  const objects: { picture: Picture; box: Box }[] = []
  for (const p of all) {
    const { result } = await engine.detect({ handle: 'objects', image: { kind: 'bytes', bytes: p.bytes }, overlay: false })
    for (const t of result.areaList[0]!.targetList) {
      const label = t.confidence[0]!.label
      if (label !== 'person' && t.confidence[0]!.confidence >= 0.4 && t.box.width >= 32 && t.box.height >= 32 && !seenBefore(objects, p, t.box))
        objects.push({ picture: p, box: t.box })
    }
  }
  await engine.release('objects')
  for (const [i, o] of objects.entries()) await whole(await picture(await crop(o.picture, o.box), `${o.picture.name} object ${i}`), 'object')
  for (const p of all.filter((q) => !q.frame))
    for (let ty = 0; ty < 4; ty++)
      for (let tx = 0; tx < 4; tx++) {
        const box = { x: Math.round((tx * p.width) / 4), y: Math.round((ty * p.height) / 4), width: Math.floor(p.width / 4), height: Math.floor(p.height / 4) }
        await whole(await picture(await crop(p, box), `${p.name} tile ${tx},${ty}`), 'tile')
      }
  for (const p of all.filter((q) => q.frame && (q.frame.video === 'car-detection' ? q.frame.index % 15 === 1 : q.frame.index % 5 === 1))) await whole(p, 'scene')
  return items
}

/** Each item's changed copies searched among all items: top-1 rate and similarities. */
async function measure(items: Item[], describe: (bytes: Buffer) => Promise<DescribedRegion[]>, wholePicture: boolean) {
  const rows: { change: string; group: string; items: number; found: number; top1: number; top1Rate: number | null }[] = []
  const right: number[] = [], wrong: number[] = []
  for (const change of changes)
    for (const group of [...new Set(items.map((i) => i.group))]) {
      let queries = 0, found = 0, top1 = 0
      for (const item of items.filter((i) => i.group === group)) {
        queries++
        const copy = await change.apply(item.picture, item.box)
        const regions = await describe(copy.bytes)
        const want = copy.map(item.box)
        const region = wholePicture ? regions[0] : regions.map((r) => ({ r, o: iou(r.box, want) })).filter((c) => c.o > 0.5).sort((a, b) => b.o - a.o)[0]?.r
        if (!region) continue
        found++
        const ranked = items.map((candidate) => ({ candidate, s: dot(candidate.descriptor, region.descriptor) })).sort((a, b) => b.s - a.s)
        if (ranked[0]!.candidate === item) top1++
        right.push(ranked.find((r) => r.candidate === item)!.s)
        wrong.push(ranked.find((r) => r.candidate !== item)!.s)
      }
      rows.push({ change: change.name, group, items: queries, found, top1, top1Rate: found ? round(top1 / found) : null })
    }
  const total = (change: string) => { const r = rows.filter((x) => x.change === change); const f = r.reduce((a, x) => a + x.found, 0); return f ? round(r.reduce((a, x) => a + x.top1, 0) / f) : null }
  return {
    items: items.length,
    groups: Object.fromEntries([...new Set(items.map((i) => i.group))].map((g) => [g, items.filter((i) => i.group === g).length])),
    rows,
    top1RateByChange: Object.fromEntries(changes.map((c) => [c.name, total(c.name)])),
    rightSimilarity: { min: round(percentile(right, 0)), p05: round(percentile(right, 0.05)), median: round(percentile(right, 0.5)) },
    bestWrongSimilarity: { median: round(percentile(wrong, 0.5)), p95: round(percentile(wrong, 0.95)), max: round(percentile(wrong, 1)) },
    wrongAtOrAbove: Object.fromEntries(THRESHOLDS.map((t) => [t, wrong.filter((s) => s >= t).length])),
    rightBelow: Object.fromEntries(THRESHOLDS.map((t) => [t, right.filter((s) => s < t).length])),
    queries: right.length,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const engine = new InferenceEngine({ projectRoot: root, intraOpThreads: 2, limits: { maxEncodedImageBytes: 32 << 20, maxImagePixels: 64_000_000 } })
  try {
    const all = await pictures()
    const started = performance.now()
    const body = await measure(await bodyItems(engine, all), (bytes) => engine.describe({ algorithmId: 'body-recognition', image: { kind: 'bytes', bytes } }), false)
    const things = await measure(await thingsItems(engine, all), (bytes) => engine.describe({ algorithmId: 'things-recognition', image: { kind: 'bytes', bytes } }), true)
    const report = { pictures: all.length, seconds: Math.round((performance.now() - started) / 1000), body, things }
    console.log(JSON.stringify(report, null, 1))
    mkdirSync(path.join(root, 'bench/out'), { recursive: true })
    writeFileSync(path.join(root, 'bench/out/gallery-image-accuracy.json'), JSON.stringify(report, null, 1) + '\n')
  } finally {
    await engine.close()
  }
}
