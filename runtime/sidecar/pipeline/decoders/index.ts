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

/** The decoder table: a manifest's `decoder.kind` picks the entry. */
export function createDecoder(decoder: DetectorNode['decoder']): DetectorDecoder {
  switch (decoder.kind) {
    case 'ssd-anchors': return createSsdDecoder(decoder)
    case 'db-text': return createDbDecoder(decoder)
    case 'centernet': return createCenternetDecoder(decoder)
    case 'mask-contours': return createMaskContoursDecoder(decoder)
  }
}
