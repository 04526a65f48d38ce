import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/UpgradeStatus'],
  auth: 'session',
  body: 'json',
  summary: 'Running version, installed/previous release, pending upgrade and the upgrade history with reasons.',
  input: Type.Object({}, { additionalProperties: false }),
  handle(_input, ctx) {
    const state = ctx.upgrade.state()
    const journal = ctx.upgrade.journal()
    const time = (t: number | undefined) => t === undefined ? null : String(t)
    const release = (r: typeof state.current) => r && { version: r.version, installedAt: String(r.installedAt), base: r.dir === null }
    return {
      softwareVersion: ctx.process.softwareVersion,
      product: ctx.config.upgradeProduct,
      supervised: ctx.device.supervised,
      current: release(state.current),
      previous: release(state.previous),
      pending: state.pending && { version: state.pending.version, fromVersion: state.pending.fromVersion, stagedAt: String(state.pending.stagedAt), packageName: state.pending.packageName },
      // docs/system.md "Rollback and power cuts": the new version has not yet proved that it starts.
      probation: journal?.phase === 'probation' ? { version: journal.version, fromVersion: journal.fromVersion, start: journal.probationStarts, startedAt: String(journal.startedAt) } : null,
      history: state.history.map((h) => ({ ...h, at: String(h.at), stagedAt: time(h.stagedAt), startedAt: time(h.startedAt) })).reverse(),
    }
  },
})
