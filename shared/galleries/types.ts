import type { Identity } from '../handler.ts'
import type { RatioPoint, TargetBox } from '../inference/types.ts'

/**
 * Face galleries as handlers see them (`ctx.galleries`, spec 4.10 "Face gallery"): galleries,
 * persons with their face images, search by image, and the gallery search behind the
 * `recognizer` pipeline node. The service lives in runtime/galleries/service.ts.
 */

/** The `confidence[]` label of a face no gallery person matches (spec 2.6). */
export const UNKNOWN_FACE = 'unknown'

/** The best gallery candidate of one descriptor. */
export interface FaceMatch {
  galleryId: string
  personId: string
  name: string
  /** Cosine similarity of the descriptors, -1..1 (1 = same direction). */
  similarity: number
}

export interface RecognizeRequest {
  /** L2-normalized descriptors of the faces of one image. */
  descriptors: Float32Array[]
  /** The galleries to search; every face gallery when empty. */
  galleryIds: string[]
}

/** The best candidate per descriptor (null when the galleries hold no face). */
export type Recognize = (request: RecognizeRequest) => Promise<(FaceMatch | null)[]>

/** A face the sidecar found and described (sidecar op `describeFaces`). */
export interface DescribedFace {
  box: TargetBox
  score: number
  /** Pixel landmarks (spec 2.6 keys). */
  landmark: RatioPoint[]
  descriptor: Float32Array
  /** JPEG of the aligned face (when asked for). */
  picture: Buffer | null
}

export interface Gallery {
  galleryId: string
  name: string
  description: string
  persons: number
  faces: number
  createdAt: string
  updatedAt: string
}

export interface Person {
  galleryId: string
  personId: string
  name: string
  attributes: Record<string, unknown>
  /** Ids of the person's face images (their pictures: `/gtw/cwai/Library/FacePicture`). */
  faceIds: number[]
  createdAt: string
  updatedAt: string
}

/** One image for a person or a search: a completed upload or raw Base64 (spec 4.7 sources). */
export interface GalleryImage {
  uploadId?: string
  imageBase64?: string
}

export interface SearchHit {
  galleryId: string
  personId: string
  name: string
  similarity: number
}

export interface SearchFace {
  box: TargetBox
  landmark: RatioPoint[]
  matches: SearchHit[]
}

/** One failed row of a face import. */
export interface ImportRowError {
  /** 1-based manifest row. */
  row: number
  personId: string
  file: string
  reason: 'missing-file' | 'no-face' | 'several-faces' | 'duplicate-id' | 'invalid-row' | 'bad-image'
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

export interface GalleriesService {
  createGallery(input: { galleryId?: string; name: string; description?: string }): Promise<Gallery>
  updateGallery(input: { galleryId: string; name?: string; description?: string }): Promise<Gallery>
  /** Deletes the gallery with its persons and faces. */
  deleteGallery(galleryId: string): Promise<void>
  listGalleries(page: { pageNum: number; pageSize: number }): Promise<{ total: number; rows: Gallery[] }>
  /** GalleryPersonExists when the person id is taken in that gallery. */
  createPerson(input: { galleryId: string; personId: string; name: string; attributes?: Record<string, unknown> }): Promise<Person>
  updatePerson(input: { galleryId: string; personId: string; name?: string; attributes?: Record<string, unknown> }): Promise<Person>
  deletePerson(galleryId: string, personId: string): Promise<void>
  getPerson(galleryId: string, personId: string): Promise<Person>
  listPersons(query: { galleryId: string; name?: string; pageNum: number; pageSize: number }): Promise<{ total: number; rows: Person[] }>
  /**
   * Adds one face image: exactly one face must be found (GalleryFaceCount otherwise, nothing
   * stored); the aligned face's descriptor and picture are stored.
   */
  addFace(input: { galleryId: string; personId: string; image: GalleryImage; identity: Identity }): Promise<{ faceId: number; box: TargetBox }>
  deleteFace(galleryId: string, personId: string, faceId: number): Promise<void>
  /** The stored picture (JPEG) of a face. */
  facePicture(faceId: number): Promise<Buffer>
  /** Closest persons per face of the image, best first, at or above `threshold` when given. */
  search(input: { galleryId?: string; image: GalleryImage; topK: number; threshold?: number; identity: Identity }): Promise<SearchFace[]>
  /**
   * Starts importing persons from an archive upload (purpose `face-import`) into a gallery;
   * the job runs in the background (`importStatus`).
   */
  startImport(input: { galleryId: string; uploadId: string; identity: Identity }): Promise<{ jobId: string }>
  importStatus(jobId: string): Promise<ImportJob>
  /** The gallery search of the `recognizer` node (runtime ↔ sidecar, see README "Galleries"). */
  recognize: Recognize
}
