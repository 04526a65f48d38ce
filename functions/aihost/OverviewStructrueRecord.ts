import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import { pipelineGraph } from '../../shared/tasks/pipeline-graph.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/OverviewStructrueRecord'],
  auth: 'session',
  body: 'json',
  summary: 'The pipeline graph (nodes and edges) of a task, or of an algorithm, with effective thresholds.',
  input: Type.Object({
    taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    algorithmCode: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    if ((input.taskId === undefined) === (input.algorithmCode === undefined)) throw invalidParam('/taskId', 'send exactly one of taskId and algorithmCode')
    const task = input.taskId !== undefined ? await ctx.tasks.get(input.taskId) : null
    const algorithmCode = task?.algorithmCode ?? input.algorithmCode!
    const pipeline = ctx.device.pipeline(algorithmCode)
    if (!pipeline) throw new ApiError('ActionAlgLoadFailed', { details: { algorithmCode } })
    const graph = pipelineGraph(pipeline, (task?.taskConfig ?? {}) as never)
    return { taskId: task?.taskId ?? null, algorithmCode, algorithmName: pipeline.algorithmName, version: pipeline.version, ...graph }
  },
})
