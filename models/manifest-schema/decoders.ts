import { Type, type Static } from '@sinclair/typebox'
import { Coefficient, Count, Pixels, strict } from './common.ts'

/** Detector decoders of the pipeline manifest (models/manifest-schema.ts), one per `decoder.kind` (runtime/sidecar/pipeline/decoders/). */

/** MediaPipe's SsdAnchorsCalculatorOptions; anchors are generated in code from these. */
export const SsdAnchorOptions = Type.Object({
  numLayers: Type.Integer({ minimum: 1, maximum: 16 }),
  minScale: Coefficient(),
  maxScale: Coefficient(),
  inputSizeWidth: Pixels(1),
  inputSizeHeight: Pixels(1),
  anchorOffsetX: Coefficient(),
  anchorOffsetY: Coefficient(),
  strides: Type.Array(Pixels(1), { minItems: 1, maxItems: 16 }),
  aspectRatios: Type.Array(Coefficient({ exclusiveMinimum: 0 }), { minItems: 1, maxItems: 16 }),
  fixedAnchorSize: Type.Boolean(),
  interpolatedScaleAspectRatio: Coefficient(),
  reduceBoxesInLowestLayer: Type.Boolean(),
}, strict)

/** Single-shot detector with anchor regression and keypoints (BlazeFace family). */
export const SsdDecoder = Type.Object({
  kind: Type.Literal('ssd-anchors'),
  /** Output names, concatenated in this order along the anchor axis. */
  scoreOutputs: Type.Array(Type.String(), { minItems: 1 }),
  regressorOutputs: Type.Array(Type.String(), { minItems: 1 }),
  anchors: SsdAnchorOptions,
  /** Values per anchor in the regressor output: 4 box values then 2 per keypoint. */
  numCoords: Type.Integer({ minimum: 4, maximum: 4096 }),
  numKeypoints: Type.Integer({ minimum: 0, maximum: 1024 }),
  /** Regressor values are in input pixels: divided by these before use (x, y, w, h). */
  coordScale: Type.Array(Coefficient({ exclusiveMinimum: 0 }), { minItems: 4, maxItems: 4 }),
  scoreClip: Coefficient({ exclusiveMinimum: 0 }),
  keypointNames: Type.Optional(Type.Array(Type.String())),
}, strict)

/** Differentiable-binarization text detector: probability map → polygons (PP-OCR DB). */
export const DbDecoder = Type.Object({
  kind: Type.Literal('db-text'),
  output: Type.String(),
  /** Pixel threshold of the probability map. */
  binaryThreshold: Type.Number({ minimum: 0, maximum: 1 }),
  /** Region expansion: distance = area × ratio / perimeter. */
  unclipRatio: Coefficient({ minimum: 0 }),
  /** Regions whose shorter side (input pixels) is below this are dropped. */
  minSize: Coefficient({ minimum: 0 }),
  maxCandidates: Count(1),
}, strict)

/** CenterNet (converted TF.js, models/README.md): top-K rows x1,y1,x2,y2 (input px), score, class. */
export const CenternetDecoder = Type.Object({
  kind: Type.Literal('centernet'),
  output: Type.String(),
  /** Class-wise NMS over the rows. */
  iouThreshold: Type.Number({ minimum: 0, maximum: 1 }),
  maxDetections: Count(1),
  /** Keep only these class indices (e.g. [0] = COCO person); all when absent. */
  classes: Type.Optional(Type.Array(Count(0), { minItems: 1, maxItems: 10_000 })),
}, strict)

/**
 * Segmentation mask → one target per region (models/segment): contours traced with
 * d3-contour at `maskThreshold`, simplified (simplify-js, `tolerance` in mask pixels),
 * regions below `minArea` (fraction of the image) dropped. The polygon becomes `maskPolygon`.
 */
export const MaskContoursDecoder = Type.Object({
  kind: Type.Literal('mask-contours'),
  output: Type.Optional(Type.String()),
  maskThreshold: Type.Number({ minimum: 0, maximum: 1 }),
  tolerance: Coefficient({ minimum: 0 }),
  minArea: Type.Number({ minimum: 0, maximum: 1 }),
}, strict)

export type SsdAnchorOptions = Static<typeof SsdAnchorOptions>
export type SsdDecoder = Static<typeof SsdDecoder>
export type DbDecoder = Static<typeof DbDecoder>
export type CenternetDecoder = Static<typeof CenternetDecoder>
export type MaskContoursDecoder = Static<typeof MaskContoursDecoder>
