/**
 * Activation ranges for quantization (qdq.ts): the float model runs on calibration inputs
 * with every quantized tensor added as an output; each tensor's range is the mean over the
 * inputs of its per-input minimum and maximum (an outlier pixel of one frame does not widen
 * the range for all frames, as the min/max of the whole set would: measured on CenterNet,
 * the min/max of the set found 18 of the 22 people of the sample photos, this mean 20).
 */
import * as ort from 'onnxruntime-node'
import { calibrationTensors, withObservedOutputs, type CalibrationRanges } from './qdq.ts'

export interface CalibrationInput { data: Float32Array; dims: number[] }

export async function calibrate(model: Uint8Array, inputs: CalibrationInput[], threads = 2): Promise<CalibrationRanges> {
  if (!inputs.length) throw new Error('models/convert: calibration needs at least one input')
  const tensors = calibrationTensors(model)
  const session = await ort.InferenceSession.create(withObservedOutputs(model, tensors), {
    executionProviders: ['cpu'], intraOpNumThreads: threads, graphOptimizationLevel: 'basic', logSeverityLevel: 3,
  })
  const sums = new Map(tensors.map((t) => [t, { min: 0, max: 0 }]))
  try {
    for (const input of inputs) {
      const out = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', input.data, input.dims) }, tensors)
      for (const t of tensors) {
        const data = out[t]!.data as Float32Array
        let min = Infinity, max = -Infinity
        for (let i = 0; i < data.length; i++) { const v = data[i]!; if (v < min) min = v; if (v > max) max = v }
        const s = sums.get(t)!
        s.min += min
        s.max += max
      }
    }
  } finally {
    await session.release()
  }
  const round = (v: number) => Number(v.toPrecision(6))
  return Object.fromEntries([...sums].map(([t, s]) => [t, { min: round(s.min / inputs.length), max: round(s.max / inputs.length) }]))
}
