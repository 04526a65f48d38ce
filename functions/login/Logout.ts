import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/login/Logout'],
  auth: 'session-any',
  body: 'json',
  summary: 'Sign out: revokes the mtk of this request.',
  input: Type.Object({}),
  async handle(_input, ctx) {
    // Through ctx.sessions, so that a cached copy of this mtk is dropped at once too.
    if (ctx.identity?.sessionId) await ctx.sessions.revoke(ctx.identity.sessionId)
  },
})
