import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

const Jpeg = (what: string) => Type.Optional(Type.Object({
  quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'libjpeg quality.' })),
  maxSide: Type.Optional(Type.Integer({ minimum: 0, maximum: 16_384, description: 'Longest side in pixels; larger pictures are scaled down keeping their aspect; 0 = full size.' })),
}, { additionalProperties: false, description: what }))

export default defineHandler({
  routes: ['/gtw/cwai/System/SetImageQualityParam'],
  auth: 'session',
  body: 'json',
  summary: 'Changes the JPEG quality and size cap of overlays (fullPicture), stream-task snapshots and camera captures; applied to the next picture, no restart (spec 4.10 System). Fields not sent keep their value. Answers as QueryImageQualityParam.',
  input: Type.Object({
    overlay: Jpeg('Detection overlays (spec 2.6 fullPicture).'),
    snapshot: Jpeg('Stream-task snapshots (object.entered snapshotUrl).'),
    capture: Jpeg('Camera captures (Camera/capture).'),
  }, { additionalProperties: false }),
  handle(input, ctx) {
    return ctx.imageQuality.set(input)
  },
})
