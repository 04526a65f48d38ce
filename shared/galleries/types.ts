import type { Identity } from '../handler.ts'
import type { RatioPoint, TargetBox } from '../inference/types.ts'
import type { GalleryKind } from './kinds.ts'

/**
 * Galleries as handlers see them (`ctx.galleries`, spec 4.10 Face, Body and Things gallery):
 * galleries, items (a face gallery's persons) with their images, search by image, face
 * imports, and the gallery search behind the `recognizer` pipeline node. Records carry
 * generic names (`itemId`, `imageId`); `toWire` (kinds.ts) gives each kind its own. The
 * service lives in runtime/galleries/service.ts.
 */

/** The `confidence[]` label of a target no gallery item matches (spec 2.6). */
export const UNKNOWN_LABEL = 'unknown'

/** The best gallery candidate of one descriptor. */
export interface GalleryMatch {
  galleryId: string
  itemId: string
  name: string
  /** Cosine similarity of the descriptors, -1..1 (1 = same direction). */
  similarity: number
}

export interface RecognizeRequest {
  /** Which kind of gallery a recognizer node searches (its manifest's `gallery`). */
  kind: GalleryKind
  /** L2-normalized descriptors of the targets of one image. */
  descriptors: Float32Array[]
  /** The galleries to search; every gallery of the kind when empty. */
  galleryIds: string[]
  /** The model that made the descriptors (models/descriptor-model.ts): only images it described are compared. */
  model: string
}

/**
 * What a stream task's recognition said of one tracked object (docs/cameras-and-stream-tasks.md "Stream tasks"): the best
 * gallery person at or above the task's threshold, else `unknown` with `personId` null.
 */
export interface ObjectRecognition {
  name: string
  personId: string | null
  galleryId: string | null
  /** Cosine similarity of the best gallery person (0 when the galleries hold no face). */
  similarity: number
}

/** The best candidate per descriptor (null when the galleries hold no image). */
export type Recognize = (request: RecognizeRequest) => Promise<(GalleryMatch | null)[]>

/** A region the sidecar found and described (sidecar op `describe`): a face, a person, or the whole image. */
export interface DescribedRegion {
  box: TargetBox
  score: number
  /** Pixel landmarks (spec 2.6 keys); empty without keypoints. */
  landmark: RatioPoint[]
  descriptor: Float32Array
  /** The model that made the descriptor (models/descriptor-model.ts). */
  model: string
  /** JPEG of the region described (the aligned face, the person), when asked for. */
  picture: Buffer | null
}

export interface Gallery {
  galleryId: string
  name: string
  description: string
  items: number
  images: number
  createdAt: string
  updatedAt: string
}

export interface GalleryItem {
  galleryId: string
  itemId: string
  name: string
  attributes: Record<string, unknown>
  /** Ids of the item's images (their pictures: the kind's picture route). */
  imageIds: number[]
  createdAt: string
  updatedAt: string
}

/** One image for an item or a search: a completed upload or raw Base64 (spec 4.7 sources). */
export interface GalleryImage {
  uploadId?: string
  imageBase64?: string
}

export interface SearchRegion {
  box: TargetBox
  landmark: RatioPoint[]
  matches: GalleryMatch[]
}

/** One failed row of a face import. */
export interface ImportRowError {
  /** 1-based manifest row. */
  row: number
  personId: string
  file: string
  reason: 'missing-file' | 'no-face' | 'several-faces' | 'duplicate-id' | 'invalid-row' | 'bad-image' | 'poor-face'
  /** Faces found, for no-face / several-faces. */
  faces?: number
  detail?: string
}

/** A face import job (spec 4.10 "File import": import status). */
export interface ImportJob {
  jobId: string
  galleryId: string
  state: 'running' | 'done' | 'failed'
  total: number
  processed: number
  imported: number
  /** Rows whose person already had this very image (a re-run of the same archive). */
  skipped: number
  failed: number
  errors: ImportRowError[]
  /** Why the whole job failed (the archive or its manifest), as a message item (spec 2.7). */
  error: Record<string, unknown> | null
  createdAt: string
  updatedAt: string
}

/** The galleries of one kind. */
export interface GalleryStore {
  createGallery(input: { galleryId?: string; name: string; description?: string }): Promise<Gallery>
  updateGallery(input: { galleryId: string; name?: string; description?: string }): Promise<Gallery>
  /** Deletes the gallery with its items and images. */
  deleteGallery(galleryId: string): Promise<void>
  listGalleries(page: { pageNum: number; pageSize: number }): Promise<{ total: number; rows: Gallery[] }>
  /** The kind's itemExists error when the item id is taken in that gallery. */
  createItem(input: { galleryId: string; itemId: string; name: string; attributes?: Record<string, unknown> }): Promise<GalleryItem>
  updateItem(input: { galleryId: string; itemId: string; name?: string; attributes?: Record<string, unknown> }): Promise<GalleryItem>
  deleteItem(galleryId: string, itemId: string): Promise<void>
  getItem(galleryId: string, itemId: string): Promise<GalleryItem>
  listItems(query: { galleryId: string; name?: string; pageNum: number; pageSize: number }): Promise<{ total: number; rows: GalleryItem[] }>
  /**
   * Adds one image: the kind's subject (a face, a person) must be found exactly once (its
   * count error otherwise, nothing stored); the region's descriptor and picture are stored.
   */
  addImage(input: { galleryId: string; itemId: string; image: GalleryImage; identity: Identity }): Promise<{ imageId: number; box: TargetBox }>
  deleteImage(galleryId: string, itemId: string, imageId: number): Promise<void>
  /** The stored picture (JPEG) of an image. */
  picture(imageId: number): Promise<Buffer>
  /** Closest items per region of the image, best first, at or above `threshold` when given. */
  search(input: { galleryId?: string; image: GalleryImage; topK: number; threshold?: number; identity: Identity }): Promise<SearchRegion[]>
}

/**
 * The re-description of one gallery kind's images after a change of descriptor model
 * (docs/galleries.md "Descriptor model changes"; `QueryDeviceStatus` → `galleryRedescription`).
 */
export interface Redescription {
  kind: GalleryKind
  /** `idle`: every image is described by `model`; `waiting`: the model could not be run yet. */
  state: 'idle' | 'waiting' | 'running' | 'done'
  /** The current descriptor model (null until the kind's algorithm is known). */
  model: string | null
  total: number
  described: number
  failed: number
}

export interface GalleriesService {
  /** Progress of describing stored images again after a model change, per kind. */
  redescription(): Redescription[]
  /** The galleries of one kind (spec 4.10 Face, Body, Things gallery). */
  of(kind: GalleryKind): GalleryStore
  /**
   * Starts importing persons from an archive upload (purpose `face-import`) into a face
   * gallery; the job runs in the background (`importStatus`).
   */
  startImport(input: { galleryId: string; uploadId: string; identity: Identity }): Promise<{ jobId: string }>
  importStatus(jobId: string): Promise<ImportJob>
  /** The gallery search of the `recognizer` node (runtime ↔ sidecar, see docs/galleries.md "Face galleries"). */
  recognize: Recognize
}
