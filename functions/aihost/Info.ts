import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { secondsSince } from '../../shared/aihost/system.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/Info'],
  auth: 'session',
  body: 'json',
  summary: 'Software version, build hash, uptime, model and pipeline inventory, execution providers.',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    const inference = await ctx.device.inference()
    const models = await ctx.models.list()
    return {
      softwareVersion: ctx.process.softwareVersion,
      buildHash: ctx.process.buildHash,
      startedAt: String(ctx.process.startedAt),
      uptimeSeconds: secondsSince(ctx.process.startedAt, ctx.clock.now()),
      nodeVersion: process.version,
      platform: `${process.platform}-${process.arch}`,
      models: models.map((m) => ({ modelId: m.modelId, modelName: m.modelName, source: m.source, format: m.format, sizeBytes: String(m.sizeBytes) })),
      // Known only once the inference service reports; null means "not known", not "none".
      pipelines: inference?.pipelines ?? null,
      loadedModels: inference?.loadedModels ?? null,
      executionProviders: inference?.executionProviders ?? null,
      sidecar: inference?.sidecar ?? null,
    }
  },
})
