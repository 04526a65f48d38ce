import { Type, type Static } from '@sinclair/typebox'
import { Count, PackagedFile, PackageFile, strict } from './common.ts'

/** Classifier heads of the pipeline manifest (models/manifest-schema.ts), one per `head.kind` (runtime/sidecar/pipeline/heads/). */

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

export type FaceresHead = Static<typeof FaceresHead>
