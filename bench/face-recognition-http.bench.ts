/**
 * Face recognition as an operator meets it, over HTTP (docs/galleries.md "Threshold"): the
 * built device is started, one photo of each person of shared/media/faces/labels.csv (the
 * first of each) is enrolled through the gallery API (AddLibrary, AddPerson, AddPersonImage),
 * then every other photo goes through `PTaskDetectPic` with `face-recognition` (the task's
 * recognition on that gallery, the manifest's default threshold) and through `SearchByImage`
 * (topK 10, no threshold: every enrolled person's similarity). On the largest face of each photo:
 *  - at the default threshold: enrolled people's photos named right, named wrong, `unknown`,
 *    no face; strangers named;
 *  - similarity distributions (min / median / max): the right person's (same person), the
 *    strongest wrong person's, the strangers' best; the gap = weakest right − strongest
 *    impostor (a wrong person or a stranger's best); the curve of named right / wrong /
 *    strangers named by threshold from the SearchByImage similarities;
 *  - time: `PTaskDetectPic` with `face-recognition` against `face-detection` on the same photo,
 *    the difference per face found (aligning, describing and searching a face), p50, and both
 *    request times p50.
 * The baseline is another build measured the same way in the same run: the previous
 * configuration, `face-recognition` 2.0.0 (dlib ResNet-29 on the chip sampled from the photo
 * itself, cosine of L2-normalized descriptors, threshold 0.935; `BENCH_FACE_BASELINE_REF`,
 * default 6c621fd, the last commit before 2.1.0; 8a4988c is FaceRes, 1.0.0), checked out in a
 * temporary worktree and built there, or a built checkout given as `BENCH_FACE_BASELINE_ROOT`.
 * Each build is measured alone (its device stopped before the next starts), the candidate first.
 *
 *   node build.mjs && flock /work/bench.lock npx tsx bench/face-recognition-http.bench.ts
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { startBenchDevice } from './lib/device-process.ts'
import { BENCH_DIR, BENCH_OUT_DIR } from './lib/report.ts'

const root = path.dirname(BENCH_DIR)
const facesDir = path.resolve(root, process.env.FACES_DIR ?? '../shared/media/faces')
/** Rounds of the timing pass over the probe photos (each photo through both algorithms per round). */
const TIMING_ROUNDS = Number(process.env.BENCH_FACE_TIMING_ROUNDS ?? 3)

interface Label { file: string; identity: string }
const labels: Label[] = readFileSync(path.join(facesDir, 'labels.csv'), 'utf8').trim().split('\n').slice(1).map((l) => {
  const [file, identity] = l.split(',')
  return { file: file!.trim(), identity: (identity ?? '').trim() }
})
const people = [...new Set(labels.map((l) => l.identity).filter(Boolean))]
const enrolled = people.map((p) => labels.find((l) => l.identity === p)!)
const probes = labels.filter((l) => !enrolled.includes(l))

const r4 = (v: number | undefined) => (v === undefined ? null : Math.round(v * 1e4) / 1e4)
const stats = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return { n: s.length, min: r4(s[0]), median: r4(s[Math.floor(s.length / 2)]), max: r4(s.at(-1)) } }
const p50 = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? Math.round(s[Math.floor(s.length / 2)]! * 10) / 10 : null }
const area = (t: { box: { width: number; height: number } }) => t.box.width * t.box.height
const largest = <T extends { box: { width: number; height: number } }>(xs: T[]): T | undefined => [...xs].sort((a, b) => area(b) - area(a))[0]

let baselineWorktree: string | null = null
function baselineRoot(): string {
  if (process.env.BENCH_FACE_BASELINE_ROOT) return path.resolve(process.env.BENCH_FACE_BASELINE_ROOT)
  baselineWorktree = mkdtempSync(path.join(tmpdir(), 'bench-face-base-'))
  execFileSync('git', ['worktree', 'add', '--detach', baselineWorktree, process.env.BENCH_FACE_BASELINE_REF ?? '6c621fd'], { cwd: root, stdio: 'inherit' })
  symlinkSync(path.join(root, 'node_modules'), path.join(baselineWorktree, 'node_modules'))
  execFileSync(process.execPath, ['build.mjs'], { cwd: baselineWorktree, stdio: 'inherit' })
  return baselineWorktree
}

/** The recognizer's default threshold and description in a build's face-recognition manifest. */
function recognizerOf(buildRoot: string) {
  const manifest = JSON.parse(readFileSync(path.join(buildRoot, 'models/manifests/face-recognition.json'), 'utf8'))
  const node = manifest.nodes.find((n: { action: string }) => n.action === 'recognizer')
  return { version: manifest.version as string, model: node.model as string, threshold: node.scoreThreshold as number, align: node.align }
}

async function measure(name: string, buildRoot: string) {
  const recognizer = recognizerOf(buildRoot)
  const device = await startBenchDevice({}, buildRoot)
  try {
    const mtk = await device.signIn()
    const post = async (route: string, body: unknown) => {
      const started = performance.now()
      const response = await fetch(`${device.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', mtk }, body: JSON.stringify(body) })
      const answer = await response.json() as { resCode: number; resMsg?: unknown; resData?: any }
      return { ...answer, ms: performance.now() - started }
    }
    const ok = async (route: string, body: unknown) => {
      const answer = await post(route, body)
      if (answer.resCode !== 1) throw new Error(`${name} ${route}: ${JSON.stringify(answer.resMsg)}`)
      return answer
    }
    const image = (file: string) => readFileSync(path.join(facesDir, file)).toString('base64')

    await ok('/gtw/cwai/Library/AddLibrary', { galleryId: 'bench', name: 'Labelled people' })
    const refused: { file: string; error: unknown }[] = []
    for (const { file, identity } of enrolled) {
      await ok('/gtw/cwai/Library/AddPerson', { galleryId: 'bench', personId: `p-${identity}`, name: `Person ${identity}` })
      const added = await post('/gtw/cwai/Library/AddPersonImage', { galleryId: 'bench', personId: `p-${identity}`, imageBase64: image(file) })
      if (added.resCode !== 1) refused.push({ file, error: added.resMsg })
    }
    const recognition = randomUUID(), detection = randomUUID()
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId: recognition, algorithmCode: 'face-recognition', algorithmUpdateTime: String(Date.now()), taskConfig: { recognition: { galleryIds: ['bench'] } } })
    await ok('/gtw/cwai/aihost/PTaskCreate', { taskId: detection, algorithmCode: 'face-detection', algorithmUpdateTime: String(Date.now()) })

    const rows: { file: string; identity: string; label: string | null; labelConfidence: number | null; right: number | null; bestWrong: number | null; best: { personId: string; similarity: number } | null }[] = []
    for (const { file, identity } of probes) {
      const imageBase64 = image(file)
      const detected = await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId: recognition, algorithmCode: 'face-recognition', imageBase64 })
      const face = largest(detected.resData.areaList.flatMap((a: { targetList: unknown[] }) => a.targetList) as { box: { width: number; height: number }; confidence: { label: string; confidence: number }[] }[])
      const searched = await ok('/gtw/cwai/Library/SearchByImage', { galleryId: 'bench', imageBase64, topK: 10 })
      const matches = (largest(searched.resData.faces as { box: { width: number; height: number }; matches: { personId: string; similarity: number }[] }[])?.matches ?? [])
      rows.push({
        file, identity,
        label: face?.confidence[1]?.label ?? null, labelConfidence: face?.confidence[1]?.confidence ?? null,
        right: identity ? matches.find((m) => m.personId === `p-${identity}`)?.similarity ?? null : null,
        bestWrong: matches.find((m) => m.personId !== `p-${identity}`)?.similarity ?? null,
        best: matches[0] ?? null,
      })
    }

    // Time: the same photos through face-recognition and face-detection, alternating.
    const recognitionMs: number[] = [], detectionMs: number[] = [], perFaceMs: number[] = []
    for (let round = 0; round < TIMING_ROUNDS; round++)
      for (const { file } of probes) {
        const imageBase64 = image(file)
        const a = await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId: recognition, algorithmCode: 'face-recognition', imageBase64 })
        const b = await ok('/gtw/cwai/aihost/PTaskDetectPic', { taskId: detection, algorithmCode: 'face-detection', imageBase64 })
        recognitionMs.push(a.ms)
        detectionMs.push(b.ms)
        const faces = a.resData.areaList.reduce((n: number, x: { targetList: unknown[] }) => n + x.targetList.length, 0)
        if (faces > 0) perFaceMs.push((a.ms - b.ms) / faces)
      }

    const people = rows.filter((r) => r.identity)
    const strangers = rows.filter((r) => !r.identity)
    const named = (r: typeof rows[number]) => r.label !== null && r.label !== 'unknown'
    const right = people.map((r) => r.right).filter((v): v is number => v !== null)
    const impostors = [...people.map((r) => r.bestWrong), ...strangers.map((r) => r.best?.similarity ?? null)].filter((v): v is number => v !== null)
    const curve = []
    for (let t = 0; t <= 280; t++) {
      const threshold = Math.round((0.3 + t * 0.0025) * 1e4) / 1e4
      const at = rows.filter((r) => r.best && r.best.similarity >= threshold)
      curve.push({ threshold, right: at.filter((r) => r.identity && r.best!.personId === `p-${r.identity}`).length, wrong: at.filter((r) => r.identity && r.best!.personId !== `p-${r.identity}`).length, strangers: at.filter((r) => !r.identity).length })
    }
    const firstSafe = curve.find((c) => c.wrong === 0 && c.strangers === 0)
    return {
      build: name, root: buildRoot, recognizer, refusedEnrolments: refused,
      atDefaultThreshold: {
        threshold: recognizer.threshold,
        enrolledPeoplesPhotos: people.length,
        namedRight: people.filter((r) => r.label === `Person ${r.identity}`).length,
        namedWrong: people.filter((r) => named(r) && r.label !== `Person ${r.identity}`).length,
        unknown: people.filter((r) => r.label === 'unknown').length,
        noFace: people.filter((r) => r.label === null).length,
        strangers: strangers.length,
        strangersNamed: strangers.filter(named).length,
      },
      top1Right: people.filter((r) => r.best?.personId === `p-${r.identity}`).length,
      similarity: {
        samePerson: stats(right),
        bestWrongPerson: stats(people.map((r) => r.bestWrong).filter((v): v is number => v !== null)),
        strangersBest: stats(strangers.map((r) => r.best?.similarity).filter((v): v is number => v !== undefined)),
        gap: r4(Math.min(...right) - Math.max(...impostors)),
        gapAtDefaultThreshold: { weakestRightMinusThreshold: r4(Math.min(...right) - recognizer.threshold), thresholdMinusStrongestImpostor: r4(recognizer.threshold - Math.max(...impostors)) },
      },
      noFalseMatchFrom: firstSafe ?? null,
      time: { perFaceMsP50: p50(perFaceMs), recognitionRequestMsP50: p50(recognitionMs), detectionRequestMsP50: p50(detectionMs), samples: perFaceMs.length },
      curve, photos: rows,
    }
  } finally {
    await device.stop()
  }
}

const baseline = baselineRoot()
try {
  for (const r of [root, baseline]) if (!existsSync(path.join(r, 'dist/runtime/server.mjs'))) throw new Error(`${r}/dist/runtime/server.mjs is missing: build it first`)
  const candidate = await measure('candidate (this checkout)', root)
  console.log(JSON.stringify({ ...candidate, curve: undefined, photos: undefined }))
  const before = await measure(`baseline (face-recognition ${recognizerOf(baseline).version})`, baseline)
  console.log(JSON.stringify({ ...before, curve: undefined, photos: undefined }))
  const out = process.env.FACE_HTTP_BENCH_OUT ?? path.join(BENCH_OUT_DIR, 'face-recognition-http.json')
  writeFileSync(out, JSON.stringify({ faces: path.relative(root, facesDir), enrolled: enrolled.map((e) => e.file), at: new Date().toISOString(), candidate, baseline: before }, null, 1) + '\n')
  console.log(`written ${out}`)
} finally {
  if (baselineWorktree) {
    execFileSync('git', ['worktree', 'remove', '--force', baselineWorktree], { cwd: root, stdio: 'inherit' })
    rmSync(baselineWorktree, { recursive: true, force: true })
  }
}
