import { Type, type Static } from '@sinclair/typebox'

/** The building blocks of the pipeline manifest format (models/manifest-schema.ts): bounded numbers, file references, an input tensor, NMS. */

export const strict = { additionalProperties: false } as const
export const Id = Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 64 })
// Every number is bounded (a manifest is client input through Algorithm/add): sizes in pixels,
// counts of detections or candidates, and free coefficients.
export const Pixels = (minimum: number) => Type.Integer({ minimum, maximum: 16_384 })
export const Count = (minimum: number) => Type.Integer({ minimum, maximum: 100_000 })
export const Coefficient = (options: { minimum?: number; exclusiveMinimum?: number } = {}) => Type.Number({ minimum: -1e6, ...options, maximum: 1e6 })

/** A file inside an installed npm package: resolved through node_modules, never downloaded. */
export const PackageFile = Type.Object({
  // An npm package name (optionally scoped), nothing else: `.`, `..` or a path would resolve
  // to a folder of the installation instead of a package.
  package: Type.String({ pattern: '^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$', maxLength: 214 }),
  file: Type.String({ minLength: 1, pattern: '^(?!/)(?!.*\\.\\.)' }),
}, strict)

/**
 * A file inside the algorithm's own package folder (an uploaded or exported package, see
 * models/README.md "Algorithm packages"): `models/<name>` or `files/<name>`, one level deep,
 * so that no reference can leave the package.
 */
export const PackagedFile = Type.Object({
  path: Type.String({ pattern: '^(models|files)/[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$' }),
}, strict)

/** Per-channel `(value - mean) / std`, applied to 0..255 pixel values in `channelOrder`. */
export const Normalization = Type.Object({
  mean: Type.Array(Coefficient(), { minItems: 3, maxItems: 3 }),
  std: Type.Array(Coefficient({ minimum: 1e-6 }), { minItems: 3, maxItems: 3 }),
}, strict)

/**
 * How an image becomes the model's input tensor.
 * - `letterbox`: scale to fit `width`×`height` keeping the aspect ratio, pad right/bottom.
 * - `stretch`: scale to exactly `width`×`height`.
 * - `fit-multiple`: keep the ratio, longest side at most `limitSideLen`, each side rounded to
 *   a multiple of `multipleOf` (segmentation-style detectors with dynamic input shapes).
 * - `fixed-height`: height `height`, width from the aspect ratio, between `minWidth` and
 *   `maxWidth` (sequence recognizers); when `width` is set the tensor is padded to it.
 */
export const InputSpec = Type.Object({
  name: Type.Optional(Type.String()),
  /** One gray channel = Σ weight × normalized channel (e.g. BT.601 luma), instead of three. */
  grayWeights: Type.Optional(Type.Array(Coefficient(), { minItems: 3, maxItems: 3 })),
  resize: Type.Union([Type.Literal('letterbox'), Type.Literal('stretch'), Type.Literal('fit-multiple'), Type.Literal('fixed-height')]),
  width: Type.Optional(Pixels(1)),
  height: Type.Optional(Pixels(1)),
  limitSideLen: Type.Optional(Pixels(32)),
  multipleOf: Type.Optional(Pixels(1)),
  minWidth: Type.Optional(Pixels(1)),
  maxWidth: Type.Optional(Pixels(1)),
  layout: Type.Union([Type.Literal('NHWC'), Type.Literal('NCHW')]),
  channelOrder: Type.Union([Type.Literal('RGB'), Type.Literal('BGR')]),
  normalization: Normalization,
}, strict)

export const Nms = Type.Object({
  /** `weighted` blends overlapping boxes by score (MediaPipe); `hard` keeps the best. */
  method: Type.Union([Type.Literal('hard'), Type.Literal('weighted')]),
  iouThreshold: Type.Number({ minimum: 0, maximum: 1 }),
  maxDetections: Count(1),
}, strict)

/** What every pipeline node has. */
export const NodeBase = { id: Id }

export type PackageFile = Static<typeof PackageFile>
export type PackagedFile = Static<typeof PackagedFile>
export type FileRef = PackageFile | PackagedFile
export type InputSpec = Static<typeof InputSpec>
export type Nms = Static<typeof Nms>
