/**
 * COCO detector decoders by name, for pipeline manifests to reference. Pure functions over
 * model outputs: the inference sidecar runs the model, these turn its outputs into boxes.
 *
 * The device's COCO detector is CenterNet (see README.md in this folder for why).
 */
import { centernetDetectionsOutput, centernetInput, decodeCenternet } from './centernet.ts'
import { decodeNanodet, nanodetInput } from './nanodet.ts'
import type { DecodeOptions, Detection, InputSpec, OutputTensor } from './types.ts'

export interface CocoDetector {
  /** dist/models/<model>.onnx */
  model: string
  input: InputSpec
  /** Decodes the session's outputs (by output name) into detections normalized to the input square. */
  decode(outputs: Record<string, OutputTensor>, options: DecodeOptions): Detection[]
  /** Recommended settings, chosen on the sample photos (see README.md). */
  defaults: DecodeOptions
}

export const cocoDetectors: Readonly<Record<string, CocoDetector>> = {
  centernet: {
    model: 'centernet',
    input: centernetInput,
    decode: (outputs, options) => decodeCenternet(outputs[centernetDetectionsOutput] ?? missing('centernet', centernetDetectionsOutput), options),
    defaults: { minScore: 0.25, iouThreshold: 0.5, maxDetections: 100 },
  },
  nanodet: {
    model: 'nanodet',
    input: nanodetInput,
    decode: (outputs, options) => decodeNanodet(Object.values(outputs), options),
    defaults: { minScore: 0.25, iouThreshold: 0.4, maxDetections: 100 },
  },
}

function missing(model: string, output: string): never {
  throw new Error(`${model}: output ${output} is missing`)
}

export { cocoLabels } from './coco-labels.ts'
export { letterboxGeometry, unletterbox, type Letterbox } from './letterbox.ts'
export { inputTensor } from './preprocess.ts'
export { iou, nonMaxSuppression } from './nms.ts'
export type { Box, DecodeOptions, Detection, InputSpec, OutputTensor } from './types.ts'
