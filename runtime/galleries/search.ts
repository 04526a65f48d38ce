import { count, isNotNull, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import type { GalleryTables } from '../../shared/db/schema/index.ts'
import type { GalleryMatch } from '../../shared/galleries/types.ts'
import { similarityOfDistance } from './measure.ts'

/**
 * The `candidates` images nearest to `descriptor` by the kind's vector index, those of
 * `galleryIds` (all when empty) described by `model` kept (descriptors of two models are never
 * compared, docs/galleries.md "Descriptor model changes"), with their item's name and their
 * distance in the kind's measure (`distance`: the cosine or Euclidean distance), nearest first.
 */
export function nearestImagesQuery(tables: GalleryTables, descriptor: Float32Array, model: string, candidates: number, galleryIds: string[]): SQL {
  const { images, items } = tables
  const { vector, distance, inGalleries } = searchTerms(tables, descriptor, galleryIds)
  // The index name is catalogue data (shared/db/schema/galleries.ts), never client input.
  return sql`
    SELECT ${images.galleryId} AS galleryId, ${images.itemId} AS itemId, ${items.name} AS name,
           ${distance} AS distance
    FROM vector_top_k(${sql.raw(`'${tables.vectorIndex}'`)}, vector32(${vector}), ${candidates}) AS t
    JOIN ${images} ON ${images.imageId} = t.id
    JOIN ${items} ON ${items.galleryId} = ${images.galleryId} AND ${items.itemId} = ${images.itemId}
    WHERE ${images.descriptorModel} = ${model} ${inGalleries}
    ORDER BY distance ASC`
}

/** Every image of `galleryIds` (all when empty) described by `model`, nearest first: the exact search of a small kind (nearestItems). */
export function allImagesByDistanceQuery(tables: GalleryTables, descriptor: Float32Array, model: string, galleryIds: string[]): SQL {
  const { images, items } = tables
  const { distance, inGalleries } = searchTerms(tables, descriptor, galleryIds)
  return sql`
    SELECT ${images.galleryId} AS galleryId, ${images.itemId} AS itemId, ${items.name} AS name,
           ${distance} AS distance
    FROM ${images}
    JOIN ${items} ON ${items.galleryId} = ${images.galleryId} AND ${items.itemId} = ${images.itemId}
    WHERE ${images.descriptorModel} = ${model} AND ${images.descriptor} IS NOT NULL ${inGalleries}
    ORDER BY distance ASC`
}

function searchTerms(tables: GalleryTables, descriptor: Float32Array, galleryIds: string[]) {
  const { images } = tables
  const vector = new Uint8Array(descriptor.buffer, descriptor.byteOffset, descriptor.byteLength)
  const inGalleries = galleryIds.length > 0 ? sql`AND ${images.galleryId} IN (${sql.join(galleryIds.map((g) => sql`${g}`), sql`, `)})` : sql``
  const distance = tables.measure === 'euclidean' ? sql`vector_distance_l2(${images.descriptor}, vector32(${vector}))` : sql`vector_distance_cos(${images.descriptor}, vector32(${vector}))`
  return { vector, distance, inGalleries }
}

/**
 * Up to this many stored images of a kind, a search compares every one of them exactly instead
 * of asking the vector index: libsql's index can lose a vector when an identical one is deleted
 * (the same photo enrolled for two people, one of them deleted), and a small gallery costs a
 * scan of a few milliseconds (docs/galleries.md "Search").
 */
const EXACT_SEARCH_MAX_IMAGES = 2000

/**
 * The `k` closest items (best image each): every image compared when the kind holds at most
 * EXACT_SEARCH_MAX_IMAGES, else through the vector index. `vector_top_k` ranks the whole
 * index, so candidates of other galleries are filtered out afterwards and the candidate count
 * grows until `k` items are found or every stored image was a candidate.
 */
export async function nearestItems(db: Db, tables: GalleryTables, descriptor: Float32Array, model: string, galleryIds: string[], k: number): Promise<GalleryMatch[]> {
  // Every indexed image (any model) may be a candidate of vector_top_k.
  const [{ stored }] = await db.select({ stored: count() }).from(tables.images).where(isNotNull(tables.images.descriptor)) as [{ stored: number }]
  if (stored === 0) return []
  for (let candidates = Math.max(16, k * 4); ; candidates *= 4) {
    const exact = stored <= EXACT_SEARCH_MAX_IMAGES
    const rows = await db.all<Omit<GalleryMatch, 'similarity'> & { distance: number }>(exact
      ? allImagesByDistanceQuery(tables, descriptor, model, galleryIds)
      : nearestImagesQuery(tables, descriptor, model, candidates, galleryIds))
    const best = new Map<string, GalleryMatch>()
    for (const r of rows) {
      const key = `${r.galleryId}\u0000${r.itemId}`
      if (!best.has(key)) best.set(key, { galleryId: r.galleryId, itemId: r.itemId, name: r.name, similarity: Math.round(similarityOfDistance(tables.measure, r.distance) * 1e4) / 1e4 })
    }
    if (exact || best.size >= k || candidates >= stored) return [...best.values()].slice(0, k)
  }
}
