import { Type } from '@sinclair/typebox'
import { PageNumber, PageSize } from '../http/paging.ts'

/** Request fields shared by the gallery endpoints (spec 4.10 Face, Body, Things gallery). */
export const GalleryId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' })
/** An item's (a face gallery's person's) client-chosen id. */
export const ItemId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' })
export const ImageId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
export const Name = Type.String({ minLength: 1, maxLength: 128 })
export const Description = Type.String({ maxLength: 1024 })
export const Attributes = Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 64 })
export const Page = {
  pageNum: Type.Optional(PageNumber()),
  pageSize: Type.Optional(PageSize(20, 500)),
}
/** spec 4.7 image sources a gallery accepts: a completed upload (purpose `image` or `face-import`) or raw Base64 under the JSON limit. */
export const ImageFields = {
  uploadId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  imageBase64: Type.Optional(Type.String()),
}
