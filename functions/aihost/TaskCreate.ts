import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'

export default defineHandler({
  routes: ['/v1/cwai/aihost/TaskCreate'],
  auth: 'session',
  body: 'json',
  summary: 'Stream (camera) task creation: not supported yet on this device.',
  // Any body is accepted: the answer is the same whatever the client sends.
  input: Type.Object({}),
  handle() {
    // spec 4.9: the route exists; stream tasks come with the camera feature.
    throw new ApiError('NotSupported', {
      details: { feature: 'stream-task', route: '/v1/cwai/aihost/TaskCreate', alternative: '/v1/cwai/aihost/PTaskCreate' },
      msgText: 'Stream tasks are not supported on this device yet; use the image-analysis task (PTask*) routes.',
    })
  },
})
