import type * as ort from 'onnxruntime-node'
import type { DetectorNode } from '../../../../models/manifest-schema.ts'
import type { Detection } from '../detection.ts'
import type { PreparedInput } from '../rgb-image.ts'
import { createCenternetDecoder } from './centernet.ts'
import { createDbDecoder } from './db-text.ts'
import { createMaskContoursDecoder } from './mask-contours.ts'
import { createSsdDecoder } from './ssd-anchors.ts'

/** Turns raw detector outputs into detections in source pixels, above `threshold`. */
export type DetectorDecoder = (outputs: Record<string, ort.Tensor>, input: PreparedInput, threshold: number) => Detection[]

type Decoder = DetectorNode['decoder']

/** The decoder table: a manifest's `decoder.kind` picks the entry (one file per decoder in this folder). */
const decoderPlugins: { [K in Decoder['kind']]: (decoder: Extract<Decoder, { kind: K }>) => DetectorDecoder } = {
  'ssd-anchors': createSsdDecoder,
  'db-text': createDbDecoder,
  centernet: createCenternetDecoder,
  'mask-contours': createMaskContoursDecoder,
}

/** The decoder of a detector node's `decoder` options. */
export function createDecoder(decoder: Decoder): DetectorDecoder {
  return (decoderPlugins[decoder.kind] as (decoder: Decoder) => DetectorDecoder)(decoder)
}
