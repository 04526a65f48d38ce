import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

import { DOCUMENT_PATHS, DOCUMENT_VERSION } from '../../shared/docs/paths.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryInterfaceDocUrl'],
  auth: 'session',
  body: 'json',
  summary: 'Document URL query (spec 4.11): type 0 returns the path of the HTTP interface document, type 1 that of the MQTT document.',
  input: Type.Object({
    type: Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal('0'), Type.Literal('1')], { description: '0 = HTTP interface document, 1 = MQTT interface document.' }),
  }),
  handle({ type }) {
    // spec 4.11: type 0 → the HTTP document, type 1 → the MQTT document (both v1.0, spec 9).
    const key = Number(type) as 0 | 1
    return { type: key, url: DOCUMENT_PATHS[key], version: DOCUMENT_VERSION }
  },
})
