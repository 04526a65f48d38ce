import os from 'node:os'
import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { bootId, cpuLoad, secondsSince, storageOf, systemMemory } from '../../shared/aihost/system.ts'

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryDeviceStatus'],
  auth: 'session',
  body: 'json',
  summary: 'Boot identity, software version, uptime, storage, CPU load, memory, sidecar state, last upgrade.',
  input: Type.Object({}, { additionalProperties: false }),
  async handle(_input, ctx) {
    const inference = await ctx.device.inference()
    const upgrade = ctx.upgrade.state()
    const now = ctx.clock.now()
    return {
      // spec 4.11: this boot of the device; new at every start of the device by its supervisor
      // (the reboot of an upgrade, a rollback, a restart) and after an OS reboot (docs/system.md).
      bootId: ctx.process.bootId,
      // The kernel's own boot identity: changes only when the operating system reboots.
      osBootId: await bootId(),
      // spec 4.11: the version of the running process; changes only after a real install.
      softwareVersion: ctx.process.softwareVersion,
      buildHash: ctx.process.buildHash,
      uptimeSeconds: secondsSince(ctx.process.startedAt, now),
      systemUptimeSeconds: Math.floor(os.uptime()),
      storage: await storageOf(ctx.config.dataPath),
      cpu: cpuLoad(),
      memory: await systemMemory(),
      sidecar: inference?.sidecar ?? null,
      supervised: ctx.device.supervised,
      // A full disk: log lines wait in memory, then are dropped and counted; the device goes on.
      logFile: ctx.device.logFile(),
      // Gallery images described again after a change of descriptor model (docs/galleries.md "Descriptor model changes").
      galleryRedescription: ctx.galleries.redescription(),
      lastUpgrade: upgrade.history.at(-1) ?? null,
      pendingUpgrade: upgrade.pending ? { version: upgrade.pending.version, stagedAt: upgrade.pending.stagedAt } : null,
      timestamp: String(now),
    }
  },
})
