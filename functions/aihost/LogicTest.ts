import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { invalidParam } from '../../shared/errors/index.ts'
import { LogicSpec, LogicTarget, MAX_PIXELS } from '../../shared/logic/condition.ts'
import { evaluateLogic } from '../../shared/logic/evaluate.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/LogicTest'],
  auth: 'session',
  body: 'json',
  summary: 'Evaluates a logic-node condition against a supplied target list; returns which targets meet it.',
  input: Type.Object({
    logic: LogicSpec,
    targetList: Type.Array(LogicTarget, { maxItems: 10_000 }),
    imageWidth: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PIXELS })),
    imageHeight: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PIXELS })),
  }, { additionalProperties: false }),
  handle(input, ctx) {
    const { condition } = input.logic
    if (condition.minConfidence !== undefined && condition.maxConfidence !== undefined && condition.minConfidence > condition.maxConfidence)
      throw invalidParam('/logic/condition/maxConfidence', 'must not be below minConfidence')
    if (input.logic.minTargets !== undefined && input.logic.maxTargets !== undefined && input.logic.minTargets > input.logic.maxTargets)
      throw invalidParam('/logic/maxTargets', 'must not be below minTargets')
    // A normalized region needs the image size to place pixel boxes in it.
    const image = input.imageWidth && input.imageHeight ? { width: input.imageWidth, height: input.imageHeight } : null
    if (condition.region && !image) throw invalidParam(input.imageWidth ? '/imageHeight' : '/imageWidth', 'required when the condition has a region')
    const verdict = evaluateLogic(input.logic, input.targetList, image)
    return {
      bDetected: verdict.bDetected,
      metCount: verdict.metCount,
      total: input.targetList.length,
      metIndexes: verdict.targets.filter((t) => t.bLogicResult).map((t) => t.index),
      targets: verdict.targets,
      timestamp: String(ctx.clock.now()),
    }
  },
})
