import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

/** Execution providers that run on an accelerator with its own memory. */
const ACCELERATED = new Set(['cuda', 'tensorrt', 'rocm', 'migraphx', 'dml', 'coreml', 'openvino', 'qnn', 'webgpu'])

export default defineHandler({
  routes: ['/v1/cwai/aihost/GraphicsMemory'],
  auth: 'session',
  body: 'json',
  summary: 'Accelerator memory per execution provider; on a CPU-only device an explicit empty list.',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    const inference = await ctx.device.inference()
    // The runtime ships onnxruntime's CPU binaries only (docs/architecture.md, "Facts"); the
    // sidecar reports what its sessions really use once it runs.
    const executionProviders = inference?.executionProviders ?? ['cpu']
    const accelerated = executionProviders.filter((ep) => ACCELERATED.has(ep.toLowerCase()))
    return {
      executionProviders,
      accelerators: [],
      cpuOnly: accelerated.length === 0,
      note: accelerated.length === 0
        ? 'No accelerator: inference runs on the CPU and uses system memory (see QueryDeviceMemStatus).'
        : `Execution providers ${accelerated.join(', ')} report no memory figures to the device.`,
    }
  },
})
