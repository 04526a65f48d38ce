import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import { saveCreatedTask } from '../../shared/detection/task-store.ts'
import { effectiveThreshold, requireTask } from '../../shared/aihost/task-view.ts'

/** What each atomic action (models/manifest-schema.ts `atomicActions`) lets a running task change. */
const CONFIGURABLE: Record<string, readonly string[]> = {
  detector: ['scoreThreshold'],
  classifier: ['scoreThreshold'],
  crop: [],
  logic: [],
}

export default defineHandler({
  routes: ['/v1/cwai/aihost/OperateNode'],
  auth: 'session',
  body: 'json',
  summary: 'Re-parameterizes (scoreThreshold of a detector or classifier), disables or enables one node of a created task.',
  input: Type.Object({
    taskId: Type.String({ minLength: 1, maxLength: 128 }),
    nodeId: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 64 }),
    operation: Type.Union([Type.Literal('configure'), Type.Literal('enable'), Type.Literal('disable')]),
    params: Type.Optional(Type.Object({
      scoreThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    }, { additionalProperties: false })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    // Under the task's lock (as create, detect and cancel): a cancel cannot slip between the state
    // check and the save, which would mark a cancelled task created again.
    return ctx.inference.exclusive(input.taskId, async () => {
      const task = await requireTask(ctx, input.taskId)
      if (task.state !== 'created') throw new ApiError('NotCreated', { details: { taskId: task.taskId, state: task.state } })
      const pipeline = ctx.device.pipeline(task.algorithmCode)
      if (!pipeline) throw new ApiError('ActionAlgLoadFailed', { details: { algorithmCode: task.algorithmCode } })
      const node = pipeline.nodes.find((n) => n.id === input.nodeId)
      if (!node) throw invalidParam('/nodeId', 'no such node in the task pipeline', { nodes: pipeline.nodes.map((n) => n.id) })
      const config = { ...(task.taskConfig as { thresholds?: Record<string, number>; disabledNodes?: string[] }) }
      if (input.operation !== 'configure') {
        if (input.params !== undefined) throw invalidParam('/params', `${input.operation} takes no params`)
        // The result detector makes the targets: without it the task would answer nothing.
        if (input.operation === 'disable' && node.id === pipeline.result.targets)
          throw invalidParam('/nodeId', 'the node that produces the result targets cannot be disabled', { nodeId: node.id })
        const others = (config.disabledNodes ?? []).filter((id) => id !== node.id)
        const next = { ...config, disabledNodes: input.operation === 'disable' ? [...others, node.id] : others }
        await apply(next)
        return { taskId: task.taskId, nodeId: node.id, operation: input.operation, enabled: input.operation === 'enable' }
      }
      const allowed = CONFIGURABLE[node.action] ?? []
      const params = input.params ?? {}
      const keys = Object.keys(params)
      if (keys.length === 0) throw invalidParam('/params', `give at least one of: ${allowed.join(', ') || '(none for this node)'}`)
      for (const key of keys) if (!allowed.includes(key)) throw invalidParam(`/params/${key}`, `not configurable on a ${node.action} node`)
      const next = { ...config, thresholds: { ...(config.thresholds ?? {}), [node.id]: params.scoreThreshold! } }
      await apply(next)
      return { taskId: task.taskId, nodeId: node.id, operation: 'configure', scoreThreshold: effectiveThreshold(pipeline, node.id, next) }

      async function apply(next: Record<string, unknown>) {
        // Loading an existing handle with the same algorithm applies the new config (inference contract).
        await ctx.inference.load(task.taskId, task.algorithmCode, next as never)
        await saveCreatedTask(ctx.db, { taskId: task.taskId, algorithmCode: task.algorithmCode, taskConfig: next, createdBy: task.createdBy }, ctx.clock.now())
      }
    })
  },
})
