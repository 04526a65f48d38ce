import type { SsdAnchorOptions } from '../../../models/manifest-schema.ts'

/** An SSD anchor, normalized to the model input (0..1). */
export interface Anchor { xCenter: number; yCenter: number; width: number; height: number }

const calculateScale = (min: number, max: number, index: number, count: number) =>
  count === 1 ? (min + max) / 2 : min + ((max - min) * index) / (count - 1)

/**
 * Port of MediaPipe's SsdAnchorsCalculator (mediapipe/calculators/tflite/
 * ssd_anchors_calculator.cc): layers sharing a stride are merged into one feature map, each
 * cell gets one anchor per aspect ratio plus one interpolated-scale anchor.
 */
export function generateSsdAnchors(o: SsdAnchorOptions): Anchor[] {
  const anchors: Anchor[] = []
  let layerId = 0
  while (layerId < o.numLayers) {
    const heights: number[] = [], widths: number[] = [], ratios: number[] = [], scales: number[] = []
    let last = layerId
    while (last < o.strides.length && o.strides[last] === o.strides[layerId]) {
      const scale = calculateScale(o.minScale, o.maxScale, last, o.strides.length)
      if (last === 0 && o.reduceBoxesInLowestLayer) {
        ratios.push(1, 2, 0.5); scales.push(0.1, scale, scale)
      } else {
        for (const r of o.aspectRatios) { ratios.push(r); scales.push(scale) }
        if (o.interpolatedScaleAspectRatio > 0) {
          const next = last === o.strides.length - 1 ? 1 : calculateScale(o.minScale, o.maxScale, last + 1, o.strides.length)
          scales.push(Math.sqrt(scale * next)); ratios.push(o.interpolatedScaleAspectRatio)
        }
      }
      last++
    }
    for (let i = 0; i < ratios.length; i++) {
      const root = Math.sqrt(ratios[i]!)
      heights.push(scales[i]! / root); widths.push(scales[i]! * root)
    }
    const stride = o.strides[layerId]!
    const fmH = Math.ceil(o.inputSizeHeight / stride), fmW = Math.ceil(o.inputSizeWidth / stride)
    for (let y = 0; y < fmH; y++)
      for (let x = 0; x < fmW; x++)
        for (let a = 0; a < heights.length; a++)
          anchors.push({
            xCenter: (x + o.anchorOffsetX) / fmW,
            yCenter: (y + o.anchorOffsetY) / fmH,
            width: o.fixedAnchorSize ? 1 : widths[a]!,
            height: o.fixedAnchorSize ? 1 : heights[a]!,
          })
    layerId = last
  }
  return anchors
}
