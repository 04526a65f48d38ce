/**
 * Dev-only (tests and benchmarks): runs a TF.js graph model on @tensorflow/tfjs's pure
 * JavaScript CPU backend, the reference the ONNX conversion is checked against.
 */
import * as tf from '@tensorflow/tfjs'
import type { TfGraph } from '../tfjs-graph.ts'

export type TfGraphModel = tf.GraphModel

export async function loadReferenceModel(graph: TfGraph): Promise<tf.GraphModel> {
  await tf.setBackend('cpu')
  await tf.ready()
  const weightSpecs = graph.json.weightsManifest.flatMap((g) => g.weights)
  return tf.loadGraphModel({
    load: async () => ({
      modelTopology: graph.json.modelTopology,
      weightSpecs,
      weightData: graph.weightData,
      format: graph.json.format,
      signature: graph.json.signature,
    } as tf.io.ModelArtifacts),
  })
}

/** Runs the model on one input; returns each requested output as flat float data. */
export async function runReference(model: tf.GraphModel, inputName: string, dims: number[], data: Float32Array, outputs: string[]): Promise<{ dims: number[]; data: Float32Array }[]> {
  const x = tf.tensor(data, dims, 'float32')
  // execute(): none of these graphs has control flow, so the synchronous executor applies
  const result = model.execute({ [inputName]: x }, outputs) as tf.Tensor | tf.Tensor[]
  const list = Array.isArray(result) ? result : [result]
  const out = await Promise.all(list.map(async (t) => ({ dims: t.shape, data: Float32Array.from(await t.data()) })))
  tf.dispose([x, ...list])
  return out
}
