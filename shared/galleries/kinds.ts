import type { ErrorId } from '../errors/index.ts'

/**
 * The gallery kinds of spec 4.10 (Face gallery, Body gallery, Things gallery) as data: one
 * service, one set of handlers and one table layout serve all three, and this catalogue says
 * how each one is named on the wire and what an item image must show.
 */
export const GALLERY_KINDS = ['face', 'body', 'things'] as const
export type GalleryKind = (typeof GALLERY_KINDS)[number]

/** Generic field names (service side) → the names a kind's clients see. */
export interface WireNames {
  itemId: string
  imageId: string
  imageIds: string
  /** Gallery counts. */
  items: string
  images: string
  /** The list of described regions a search by image answers with. */
  regions: string
}

export interface GalleryKindInfo {
  kind: GalleryKind
  /** Route folder: `/gtw/cwai/<folder>/…` (spec 4.10). */
  folder: string
  /** The spec 4.10 row, for summaries and documents. */
  title: string
  /** What an item is called in route names: `Add<noun>`, `<noun>Page`, `Add<noun>Image`… */
  noun: string
  /** The GET route serving an image's stored picture. */
  pictureRoute: string
  wire: WireNames
  errors: { itemNotFound: ErrorId; itemExists: ErrorId; imageNotFound: ErrorId }
  /**
   * What the describing algorithm finds in an item image, which must be exactly one (else
   * `error` with `details[detail]` = how many); null when the whole image is the item.
   */
  subject: { noun: string; error: ErrorId; detail: string } | null
}

const ITEM_WIRE: WireNames = { itemId: 'itemId', imageId: 'imageId', imageIds: 'imageIds', items: 'items', images: 'images', regions: 'regions' }
const ITEM_ERRORS = { itemNotFound: 'GalleryItemNotFound', itemExists: 'GalleryItemExists', imageNotFound: 'GalleryImageNotFound' } as const

export const galleryKinds: Record<GalleryKind, GalleryKindInfo> = {
  face: {
    kind: 'face', folder: 'Library', title: 'Face gallery', noun: 'Person', pictureRoute: 'FacePicture',
    wire: { itemId: 'personId', imageId: 'faceId', imageIds: 'faceIds', items: 'persons', images: 'faces', regions: 'faces' },
    errors: { itemNotFound: 'GalleryPersonNotFound', itemExists: 'GalleryPersonExists', imageNotFound: 'GalleryFaceNotFound' },
    subject: { noun: 'face', error: 'GalleryFaceCount', detail: 'faces' },
  },
  body: {
    kind: 'body', folder: 'BodyLibrary', title: 'Body gallery', noun: 'Item', pictureRoute: 'ItemPicture',
    wire: ITEM_WIRE, errors: ITEM_ERRORS,
    subject: { noun: 'person', error: 'GalleryBodyCount', detail: 'persons' },
  },
  things: {
    kind: 'things', folder: 'ThingsLibrary', title: 'Things gallery', noun: 'Item', pictureRoute: 'ItemPicture',
    wire: ITEM_WIRE, errors: ITEM_ERRORS,
    subject: null,
  },
}

/** A service-side record with its generic keys renamed to the kind's wire names. */
export function toWire(kind: GalleryKind, record: object): Record<string, unknown> {
  const wire = galleryKinds[kind].wire as unknown as Record<string, string>
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [wire[key] ?? key, value]))
}

/**
 * A record (gallery, item, match, added image) in a kind's wire names back to the generic
 * keys, for clients. A search answer's region list is read by its name (`wire.regions`).
 */
export function fromWire(kind: GalleryKind, record: object): Record<string, unknown> {
  const generic = Object.fromEntries(Object.entries(galleryKinds[kind].wire).filter(([key]) => key !== 'regions').map(([key, name]) => [name, key]))
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [generic[key] ?? key, value]))
}
