import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { processMemory, runtimeMemory, systemMemory } from '../../shared/aihost/system.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/QueryDeviceMemStatus'],
  auth: 'session',
  body: 'json',
  summary: 'System memory, memory of the runtime process and of the inference sidecar.',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    const inference = await ctx.device.inference()
    const pid = inference?.sidecar.pid ?? null
    return {
      system: await systemMemory(),
      runtime: runtimeMemory(),
      // null while no sidecar runs (or before the inference service reports).
      sidecar: pid === null ? null : await processMemory(pid),
      timestamp: String(ctx.clock.now()),
    }
  },
})
