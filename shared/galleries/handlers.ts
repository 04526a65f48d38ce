import { Type } from '@sinclair/typebox'
import { defineHandler, type Ctx } from '../handler.ts'
import { galleryKinds, toWire, type GalleryKind } from './kinds.ts'
import { Attributes, Description, GalleryId, ImageFields, ImageId, ItemId, Name, Page } from './schemas.ts'
import type { GalleryImage } from './types.ts'

/**
 * The endpoints of one gallery kind (spec 4.10 Face, Body, Things gallery), built from the
 * kind catalogue (kinds.ts): the same handlers under `/gtw/cwai/<folder>/`, with the kind's
 * route and field names (`AddPerson` / `personId` for faces, `AddItem` / `itemId` otherwise).
 * Each file of functions/library, functions/body-library and functions/things-library
 * exports one of them.
 */
export function galleryHandlers(kind: GalleryKind) {
  const k = galleryKinds[kind]
  const w = k.wire
  const routes = (name: string) => [`/gtw/cwai/${k.folder}/${name}`]
  const about = `spec 4.10 ${k.title}`
  const gallery = k.title.toLowerCase()
  const item = k.noun.toLowerCase()
  const store = (ctx: Ctx) => ctx.galleries.of(kind)
  const wire = (record: object) => toWire(kind, record)
  const field = (input: object, name: string) => (input as Record<string, unknown>)[name]
  const itemKey = { galleryId: GalleryId, [w.itemId]: ItemId }
  const image = (input: { uploadId?: string; imageBase64?: string }): GalleryImage => ({ uploadId: input.uploadId, imageBase64: input.imageBase64 })
  const session = { auth: 'session', body: 'json' } as const

  return {
    addLibrary: defineHandler({
      ...session, routes: routes('AddLibrary'),
      summary: `Creates a ${gallery} (${about}); galleryId is generated when absent.`,
      input: Type.Object({ galleryId: Type.Optional(GalleryId), name: Name, description: Type.Optional(Description) }, { additionalProperties: false }),
      handle: async (input, ctx) => wire(await store(ctx).createGallery(input)),
    }),
    updateLibrary: defineHandler({
      ...session, routes: routes('UpdateLibrary'),
      summary: `Renames a ${gallery} or changes its description (${about}).`,
      input: Type.Object({ galleryId: GalleryId, name: Type.Optional(Name), description: Type.Optional(Description) }, { additionalProperties: false }),
      handle: async (input, ctx) => wire(await store(ctx).updateGallery(input)),
    }),
    deleteLibrary: defineHandler({
      ...session, routes: routes('DeleteLibrary'),
      summary: `Deletes a ${gallery} with its ${w.items} and their images (${about}).`,
      input: Type.Object({ galleryId: GalleryId }, { additionalProperties: false }),
      handle: async (input, ctx) => { await store(ctx).deleteGallery(input.galleryId) },
    }),
    libraryPage: defineHandler({
      ...session, routes: routes('LibraryPage'),
      summary: `Lists the ${gallery}s with their ${w.items} and ${w.images} counts (${about}).`,
      input: Type.Object(Page, { additionalProperties: false }),
      handle: async (input, ctx) => {
        const page = await store(ctx).listGalleries({ pageNum: input.pageNum ?? 1, pageSize: input.pageSize ?? 20 })
        return { total: page.total, rows: page.rows.map(wire) }
      },
    }),
    addItem: defineHandler({
      ...session, routes: routes(`Add${k.noun}`),
      summary: `Adds a ${item} under a client-chosen ${w.itemId} with a name and free attributes (${about}).`,
      input: Type.Object({ ...itemKey, name: Name, attributes: Type.Optional(Attributes) }, { additionalProperties: false }),
      handle: async (input, ctx) => wire(await store(ctx).createItem({
        galleryId: input.galleryId, itemId: field(input, w.itemId) as string, name: input.name as string, attributes: input.attributes as Record<string, unknown> | undefined,
      })),
    }),
    updateItem: defineHandler({
      ...session, routes: routes(`Update${k.noun}`),
      summary: `Changes a ${item}'s name or replaces its attributes (${about}).`,
      input: Type.Object({ ...itemKey, name: Type.Optional(Name), attributes: Type.Optional(Attributes) }, { additionalProperties: false }),
      handle: async (input, ctx) => wire(await store(ctx).updateItem({
        galleryId: input.galleryId, itemId: field(input, w.itemId) as string, name: input.name as string | undefined, attributes: input.attributes as Record<string, unknown> | undefined,
      })),
    }),
    deleteItem: defineHandler({
      ...session, routes: routes(`Delete${k.noun}`),
      summary: `Deletes a ${item} and its images; searches and recognition no longer find it (${about}).`,
      input: Type.Object(itemKey, { additionalProperties: false }),
      handle: async (input, ctx) => { await store(ctx).deleteItem(input.galleryId, field(input, w.itemId) as string) },
    }),
    itemDetail: defineHandler({
      ...session, routes: routes(`${k.noun}Detail`),
      summary: `One ${item} with the ids of its images (${about}).`,
      input: Type.Object(itemKey, { additionalProperties: false }),
      handle: async (input, ctx) => wire(await store(ctx).getItem(input.galleryId, field(input, w.itemId) as string)),
    }),
    itemPage: defineHandler({
      ...session, routes: routes(`${k.noun}Page`),
      summary: `Lists the ${item}s of a gallery, optionally by name substring (${about}).`,
      input: Type.Object({ galleryId: GalleryId, name: Type.Optional(Type.String({ maxLength: 128 })), ...Page }, { additionalProperties: false }),
      handle: async (input, ctx) => {
        const page = await store(ctx).listItems({ galleryId: input.galleryId, name: input.name, pageNum: input.pageNum ?? 1, pageSize: input.pageSize ?? 20 })
        return { total: page.total, rows: page.rows.map(wire) }
      },
    }),
    addItemImage: defineHandler({
      ...session, routes: routes(`Add${k.noun}Image`),
      summary: k.subject
        ? `Adds an image to a ${item}: exactly one ${k.subject.noun} must be found (${k.subject.error} names the count); its descriptor and picture are stored (${about}, spec 4.12).`
        : `Adds an image to a ${item}: the whole image is described; its descriptor and picture are stored (${about}, spec 4.12).`,
      input: Type.Object({ ...itemKey, ...ImageFields }, { additionalProperties: false }),
      handle: async (input, ctx) => wire(await store(ctx).addImage({
        galleryId: input.galleryId, itemId: field(input, w.itemId) as string, image: image(input), identity: ctx.identity!,
      })),
    }),
    deleteItemImage: defineHandler({
      ...session, routes: routes(`Delete${k.noun}Image`),
      summary: `Deletes one image of a ${item} (${about}).`,
      input: Type.Object({ ...itemKey, [w.imageId]: ImageId }, { additionalProperties: false }),
      handle: async (input, ctx) => { await store(ctx).deleteImage(input.galleryId as string, field(input, w.itemId) as string, field(input, w.imageId) as number) },
    }),
    picture: defineHandler({
      routes: routes(k.pictureRoute), auth: 'session', body: 'none', methods: ['GET'],
      summary: `The stored picture (JPEG, at most 160 × 160) of an image, for the console (${about}).`,
      input: Type.Object({ [w.imageId]: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }) }),
      async handle(input, ctx) {
        const picture = await store(ctx).picture(Number(field(input, w.imageId)))
        return new Response(new Uint8Array(picture), { headers: { 'content-type': 'image/jpeg', 'cache-control': 'private, max-age=3600' } })
      },
    }),
    searchByImage: defineHandler({
      ...session, routes: routes('SearchByImage'),
      summary: `For each ${k.subject?.noun ?? 'image'} found in the image, the closest ${item}s (one gallery or all) with their similarity (the kind's measure: docs/galleries.md "Measure"), best first (${about}).`,
      input: Type.Object({
        galleryId: Type.Optional(GalleryId),
        ...ImageFields,
        topK: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 5 })),
        threshold: Type.Optional(Type.Number({ minimum: -1, maximum: 1 })),
      }, { additionalProperties: false }),
      async handle(input, ctx) {
        const regions = await store(ctx).search({ galleryId: input.galleryId, image: image(input), topK: input.topK ?? 5, threshold: input.threshold, identity: ctx.identity! })
        return { [w.regions]: regions.map((r) => ({ ...r, matches: r.matches.map(wire) })) }
      },
    }),
  }
}
