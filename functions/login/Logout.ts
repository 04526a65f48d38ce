import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { revokeSession } from '../../shared/auth/sessions.ts'

export default defineHandler({
  routes: ['/gtw/cwai/login/Logout'],
  auth: 'session-any',
  body: 'json',
  summary: 'Sign out: revokes the mtk of this request.',
  input: Type.Object({}),
  async handle(_input, ctx) {
    if (ctx.identity?.sessionId) await revokeSession(ctx.db, ctx.identity.sessionId, ctx.clock.now())
  },
})
