import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import { effectiveThreshold } from '../../shared/tasks/pipeline-graph.ts'
import type { TaskConfig } from '../../shared/tasks/types.ts'

/** What each atomic action (models/manifest-schema.ts `atomicActions`) lets a running task change. */
const CONFIGURABLE: Record<string, readonly string[]> = {
  detector: ['scoreThreshold'],
  classifier: ['scoreThreshold'],
  crop: [],
  logic: [],
  recognizer: ['scoreThreshold'],
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
    let enabled = true
    const { task, taskConfig } = await ctx.tasks.reconfigure(input.taskId, (task) => {
      const pipeline = ctx.device.pipeline(task.algorithmCode)
      if (!pipeline) throw new ApiError('ActionAlgLoadFailed', { details: { algorithmCode: task.algorithmCode } })
      const node = pipeline.nodes.find((n) => n.id === input.nodeId)
      if (!node) throw invalidParam('/nodeId', 'no such node in the task pipeline', { nodes: pipeline.nodes.map((n) => n.id) })
      const config = task.taskConfig as TaskConfig
      if (input.operation !== 'configure') {
        if (input.params !== undefined) throw invalidParam('/params', `${input.operation} takes no params`)
        // The result detector makes the targets: without it the task would answer nothing.
        if (input.operation === 'disable' && node.id === pipeline.result.targets)
          throw invalidParam('/nodeId', 'the node that produces the result targets cannot be disabled', { nodeId: node.id })
        enabled = input.operation === 'enable'
        const others = (config.disabledNodes ?? []).filter((id) => id !== node.id)
        return { ...config, disabledNodes: enabled ? others : [...others, node.id] }
      }
      const allowed = CONFIGURABLE[node.action] ?? []
      const keys = Object.keys(input.params ?? {})
      if (keys.length === 0) throw invalidParam('/params', `give at least one of: ${allowed.join(', ') || '(none for this node)'}`)
      for (const key of keys) if (!allowed.includes(key)) throw invalidParam(`/params/${key}`, `not configurable on a ${node.action} node`)
      return { ...config, thresholds: { ...(config.thresholds ?? {}), [node.id]: input.params!.scoreThreshold! } }
    })
    if (input.operation !== 'configure') return { taskId: task.taskId, nodeId: input.nodeId, operation: input.operation, enabled }
    const scoreThreshold = effectiveThreshold(ctx.device.pipeline(task.algorithmCode)!, input.nodeId, taskConfig)
    return { taskId: task.taskId, nodeId: input.nodeId, operation: 'configure', scoreThreshold }
  },
})
