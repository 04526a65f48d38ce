import { Type, type Static } from '@sinclair/typebox'
import { Id, InputSpec, NodeBase, strict } from './common.ts'

/** The `recognizer` node of the pipeline manifest (models/manifest-schema.ts): face alignment, descriptor, gallery kind. */

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

export type RecognizerNode = Static<typeof RecognizerNode>
