/**
 * Face-gallery search speed (docs/galleries.md "Face galleries"): N unit vectors (FACE_DESCRIPTOR_DIMS values; the figures in docs were measured at 1024) stored as
 * the device stores faces (`gallery_faces`, F32_BLOB with its libsql_vector_idx index of the
 * face measure, l2 since face-recognition 2.1.0; the scan orders by the same distance): N/10 random persons with 10 faces each (the person's vector plus noise, cosine ≈ 0.8
 * to it, as several photos of one person), then queries near a person (a new photo) answered
 * by the device's query (vector_top_k) and by an exact scan of the same table in the same
 * run: latency p50/p99 and recall@10 of the index against the scan (the exact 10 nearest are
 * that person's 10 faces; with plain random vectors the 10 nearest are ties of noise that no
 * index can rank). Figures (bench/lib/report.ts) in bench/out/gallery-search.json: at the
 * largest size, the device's query (4 × k candidates) against the scan: p50 ≤ 0.1 × the scan's,
 * recall@10 ≥ 0.95.
 *
 *   npx tsx bench/gallery-search.bench.ts [N ...]   (default 10000 100000)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'drizzle-orm'
import { embeddedTuning, migrateDb, openDb } from '../runtime/db/client.ts'
import { FACE_DESCRIPTOR_DIMS, galleryFaces, galleryPersons, galleryTablesOf } from '../shared/db/schema/index.ts'
import { nearestImagesQuery } from '../runtime/galleries/search.ts'
import { migrationsDir } from '../runtime/paths.ts'
import { figure, writeReport } from './lib/report.ts'

const QUERIES = 200
const K = 10
const FACES_PER_PERSON = 10
const CANDIDATES = 4 * K
/** Every stored face is recorded as made by one model (models/descriptor-model.ts). */
const MODEL = 'build:face-recognition-resnet#descriptor@2'

function gaussian(): number {
  return Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random())
}
function unit(values: Float32Array): Float32Array {
  let s = 0
  for (const v of values) s += v * v
  const n = Math.sqrt(s)
  return values.map((v) => v / n)
}
const randomUnit = () => unit(Float32Array.from({ length: FACE_DESCRIPTOR_DIMS }, gaussian))
/** A vector moved by noise to a cosine similarity of about 0.8 to it. */
const near = (v: Float32Array) => unit(v.map((x) => x + gaussian() * 0.75 / Math.sqrt(FACE_DESCRIPTOR_DIMS)))
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

async function run(n: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gallery-bench-'))
  // The device's own tuning (WAL, synchronous NORMAL: runtime/services.ts).
  const { db, close } = openDb(`file:${path.join(dir, 'bench.db')}`, undefined, { connectionSetup: embeddedTuning('NORMAL') })
  try {
    await migrateDb(db, migrationsDir)
    // BENCH_FACE_INDEX='<options>' measures another face index (its libsql_vector_idx options, e.g. 'metric=l2', 'search_l=200').
    if (process.env.BENCH_FACE_INDEX) {
      await db.run(sql.raw('DROP INDEX gallery_faces_descriptor_idx'))
      await db.run(sql.raw(`CREATE INDEX gallery_faces_descriptor_idx ON gallery_faces (libsql_vector_idx(descriptor, ${process.env.BENCH_FACE_INDEX}))`))
    }
    const stored: Float32Array[] = []
    const picture = Buffer.alloc(0)
    const started = performance.now()
    const persons: Float32Array[] = []
    for (let i = 0; i < n; i += 500) {
      const batch = Array.from({ length: Math.min(500, n - i) }, (_, j) => {
        if ((i + j) % FACES_PER_PERSON === 0) persons.push(randomUnit())
        return near(persons.at(-1)!)
      })
      stored.push(...batch)
      await db.transaction(async (tx) => {
        await tx.insert(galleryPersons).values(batch.map((_, j) => ({ galleryId: 'g', itemId: `p${i + j}`, name: `p${i + j}`, attributes: {}, createdAt: 0, updatedAt: 0 })))
        await tx.insert(galleryFaces).values(batch.map((descriptor, j) => ({ galleryId: 'g', itemId: `p${i + j}`, descriptor, descriptorModel: MODEL, picture, createdAt: 0 })))
      })
    }
    const insertSeconds = (performance.now() - started) / 1000
    const index: number[] = [], indexWide: number[] = [], scan: number[] = []
    let hits = 0, hitsWide = 0
    for (let q = 0; q < QUERIES; q++) {
      const query = near(persons[Math.floor(Math.random() * persons.length)]!)
      let t = performance.now()
      const found = await db.all<{ itemId: string }>(nearestImagesQuery(galleryTablesOf.face, query, MODEL, K, []))
      index.push(performance.now() - t)
      // As the device asks (runtime/galleries/service.ts): 4 × k candidates, the best k kept.
      t = performance.now()
      const wide = (await db.all<{ itemId: string }>(nearestImagesQuery(galleryTablesOf.face, query, MODEL, CANDIDATES, []))).slice(0, K)
      indexWide.push(performance.now() - t)
      const bytes = new Uint8Array(query.buffer)
      t = performance.now()
      const exact = await db.all<{ itemId: string }>(sql`SELECT person_id AS itemId FROM gallery_faces ORDER BY ${galleryTablesOf.face.measure === 'euclidean' ? sql`vector_distance_l2` : sql`vector_distance_cos`}(descriptor, vector32(${bytes})) LIMIT ${K}`)
      scan.push(performance.now() - t)
      const truth = new Set(exact.map((r) => r.itemId))
      hits += found.filter((r) => truth.has(r.itemId)).length
      hitsWide += wide.filter((r) => truth.has(r.itemId)).length
    }
    index.sort((a, b) => a - b)
    indexWide.sort((a, b) => a - b)
    scan.sort((a, b) => a - b)
    return {
      stored: n, queries: QUERIES, k: K, insertSeconds: Math.round(insertSeconds * 10) / 10,
      indexMs: { p50: percentile(index, 0.5), p99: percentile(index, 0.99) },
      scanMs: { p50: percentile(scan, 0.5), p99: percentile(scan, 0.99) },
      speedupP50: percentile(scan, 0.5) / percentile(index, 0.5),
      recallAt10: hits / (QUERIES * K),
      [`candidates${CANDIDATES}`]: { p50: percentile(indexWide, 0.5), p99: percentile(indexWide, 0.99), recallAt10: hitsWide / (QUERIES * K) },
    }
  } finally {
    close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const results = []
for (const n of sizes.length > 0 ? sizes : [10_000, 100_000]) {
  const r = await run(n)
  console.log(JSON.stringify(r))
  results.push(r)
}
// The figures are the largest size's, for the query as the device asks it (4 × k candidates).
const largest = results.at(-1)!
const asked = largest[`candidates${CANDIDATES}`] as { p50: number; p99: number; recallAt10: number }
await writeReport({
  benchmark: 'gallery-search',
  description: `Face-gallery search through the vector index (vector_top_k, ${CANDIDATES} candidates, best ${K} kept) vs an exact scan of the same table, ${largest.stored} stored faces`,
  settings: { sizes: results.map((r) => r.stored), queries: QUERIES, k: K, candidates: CANDIDATES, facesPerPerson: FACES_PER_PERSON, dims: FACE_DESCRIPTOR_DIMS },
  figures: [
    figure({ name: 'search latency p50', unit: 'ms', value: asked.p50, baseline: { name: 'exact scan p50', value: largest.scanMs.p50 }, target: { ratioAtMost: 0.1 } }),
    figure({ name: 'recall@10', unit: 'fraction', value: asked.recallAt10, baseline: { name: 'exact scan', value: 1 }, target: { valueAtLeast: 0.95 } }),
  ],
  details: { results, loadAverage: os.loadavg() },
})
