import { defineHandler } from '../../shared/handler.ts'
import { CLIP_ROUTE, clipUrlOf, ClipIdInput } from '../../shared/recording/types.ts'

export default defineHandler({
  routes: ['/gtw/cwai/File/ClipPlayUrl'],
  auth: 'session',
  body: 'json',
  summary: 'A playback link of a recorded clip for a <video> element, which cannot send mtk: the clip URL with a stream token valid CLIP_LINK_TTL_MS for this clip only. ClipNotFound, ClipNotReady.',
  input: ClipIdInput,
  async handle(input, ctx) {
    await ctx.recording.clip(input.id)
    const expiresAt = ctx.clock.now() + ctx.config.clipLinkTtlMs
    const token = ctx.streamTokens.grant(CLIP_ROUTE, input.id, ctx.identity!, expiresAt)
    return { url: `${clipUrlOf(input.id)}&token=${token}`, expiresAt }
  },
})
