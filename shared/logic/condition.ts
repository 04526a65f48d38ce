import { Type, type Static } from '@sinclair/typebox'

/** Bound of pixel coordinates and sizes: beyond any image the device decodes. */
export const MAX_PIXELS = 100_000

/**
 * The logic-node condition as data (spec 2.6 `bLogicResult`, `bDetected`). A superset of the
 * logic node of the pipeline manifests (`models/manifest-schema.ts`: `condition.label`,
 * `condition.minConfidence`, `minTargets`), so a manifest's logic node evaluates unchanged.
 *
 * A target meets the condition when all given clauses hold:
 * - it has a `confidence[]` item whose label is `label` (or one of `labels`) with a
 *   confidence in [`minConfidence`, `maxConfidence`];
 * - its box is at least `minBoxWidth` × `minBoxHeight` pixels;
 * - the centre of its box lies inside `region` (normalized polygon, same keys as maskPolygon).
 * An area is `bDetected` when the number of targets meeting it is in [`minTargets`, `maxTargets`].
 */
const RatioPoint = Type.Object({
  xRatio: Type.Number({ minimum: 0, maximum: 1 }),
  yRatio: Type.Number({ minimum: 0, maximum: 1 }),
}, { additionalProperties: false })

export const LogicCondition = Type.Object({
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  labels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 64 })),
  minConfidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  maxConfidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  minBoxWidth: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_PIXELS })),
  minBoxHeight: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_PIXELS })),
  region: Type.Optional(Type.Array(RatioPoint, { minItems: 3, maxItems: 64 })),
}, { additionalProperties: false })

export const LogicSpec = Type.Object({
  condition: LogicCondition,
  minTargets: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  maxTargets: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
}, { additionalProperties: false })

/** A target as in spec 2.6 (only the fields the condition reads). */
export const LogicTarget = Type.Object({
  box: Type.Object({
    x: Type.Number({ minimum: -MAX_PIXELS, maximum: MAX_PIXELS }), y: Type.Number({ minimum: -MAX_PIXELS, maximum: MAX_PIXELS }),
    width: Type.Number({ minimum: 0, maximum: MAX_PIXELS }), height: Type.Number({ minimum: 0, maximum: MAX_PIXELS }),
  }),
  confidence: Type.Array(Type.Object({
    label: Type.String({ maxLength: 128 }),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
  }), { maxItems: 64 }),
})

export type LogicCondition = Static<typeof LogicCondition>
export type LogicSpec = Static<typeof LogicSpec>
export type LogicTarget = Static<typeof LogicTarget>
