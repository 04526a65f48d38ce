import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/network/QueryChange'],
  auth: 'session',
  body: 'json',
  summary: 'The network change waiting for confirmation (with its confirmBy deadline), the outcome of the last one, and the device clock now (count down confirmBy - now) (spec 4.10 Network).',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    return ctx.network.changeStatus()
  },
})
