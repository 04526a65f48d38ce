import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { stageUpgrade } from '../../shared/upgrade/stage.ts'
import { readUpgradeState } from '../../shared/upgrade/state.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/Upgrade'],
  auth: 'session',
  body: 'json',
  summary: 'Validates an uploaded upgrade package (name, MD5, archive safety, layout), stages it and restarts into it.',
  input: Type.Object({
    uploadId: Type.String({ minLength: 1, maxLength: 128 }),
  }, { additionalProperties: false }),
  async handle(input, ctx) {
    // Refusals that do not depend on the package come first, so the upload is not consumed.
    if (!ctx.device.supervised) throw new ApiError('UpgradeNotSupervised', { details: { start: 'npm start' } })
    const pendingNow = readUpgradeState(ctx.config.dataPath).pending
    if (pendingNow) throw new ApiError('UpgradeInProgress', { details: { version: pendingNow.version } })
    // spec 3.1, 5.4: consumed once, by the identity that uploaded it, for this purpose.
    const file = await ctx.uploads.claim(input.uploadId, ctx.identity!, 'upgrade', { keepUntilRelease: true })
    try {
      const pending = await stageUpgrade({
        dataPath: ctx.config.dataPath,
        file: file.path,
        take: 'move',
        originalFilename: file.originalFilename,
        product: ctx.config.upgradeProduct,
        limits: { maxEntries: ctx.config.upgradeMaxEntries, maxExpandedBytes: ctx.config.upgradeMaxExpandedBytes },
        runningVersion: ctx.process.softwareVersion,
        requestedBy: ctx.identity?.accountName ?? null,
        now: ctx.clock.now(),
        // TEST ONLY (docs/configuration.md): the supervisor leads the process group it kills.
        killAt: ctx.config.upgradeTestKillAt ? { step: ctx.config.upgradeTestKillAt, groupLeader: process.ppid } : undefined,
      })
      ctx.log.warn({ version: pending.version, from: pending.fromVersion }, 'upgrade staged; restarting')
      await ctx.events.emit('upgrade.staged', { version: pending.version, fromVersion: pending.fromVersion, requestedBy: pending.requestedBy })
      // spec 4.11: the start-up script revalidates and installs; softwareVersion changes only then.
      ctx.device.requestRestart(`upgrade to ${pending.version}`)
      return { version: pending.version, fromVersion: pending.fromVersion, stagedAt: String(pending.stagedAt), restarting: true }
    } finally {
      await file.release()
    }
  },
})
