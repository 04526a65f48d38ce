import { Type } from '@sinclair/typebox'
import { atomicActionCatalogue } from '../../shared/models/action-catalogue.ts'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  // spec 4.10 "Atomic action": the pipeline node catalogue with each node's parameters.
  routes: ['/gtw/cwai/atomic/action/list'],
  auth: 'session',
  body: 'json',
  summary: 'List the pipeline node kinds (atomic actions) and their parameters (spec 4.10).',
  input: Type.Object({
    /** Only this action (e.g. "detector"); all when empty or absent. */
    action: Type.Optional(Type.String({ maxLength: 64 })),
  }),
  async handle(input) {
    const rows = atomicActionCatalogue().filter((a) => !input.action || a.action === input.action)
    return { total: rows.length, rows }
  },
})
