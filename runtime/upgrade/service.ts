import type { Config } from '../../shared/config.ts'
import type { DeviceHost } from '../../shared/aihost/types.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { UploadService } from '../../shared/uploads/index.ts'
import type { StagedUpgrade, UpgradeJournal, UpgradeService, UpgradeState } from '../../shared/upgrade/types.ts'
import { readJournal } from './journal.ts'
import { stageUpgrade } from './stage.ts'
import { readUpgradeState } from './state.ts'

export interface DeviceUpgradeOptions {
  config: Config
  clock: Clock
  log: Logger
  uploads: UploadService
  events: EventsService
  /** Whether a supervisor runs the device, and the restart it carries out. */
  device: DeviceHost
  /** The running version (an upgrade must be newer). */
  softwareVersion: () => string
}

/** `ctx.upgrade` (shared/upgrade/types.ts): stages a package for the supervisor's next start (spec 4.11). */
export class DeviceUpgrade implements UpgradeService {
  readonly #o: DeviceUpgradeOptions

  constructor(options: DeviceUpgradeOptions) {
    this.#o = options
  }

  state(): UpgradeState {
    return readUpgradeState(this.#o.config.dataPath)
  }

  journal(): UpgradeJournal | null {
    return readJournal(this.#o.config.dataPath)
  }

  async stage(identity: Identity, uploadId: string): Promise<StagedUpgrade> {
    const { config, device } = this.#o
    // Refusals that do not depend on the package come first, so the upload is not consumed.
    if (!device.supervised) throw new ApiError('UpgradeNotSupervised', { details: { start: 'npm start' } })
    const pendingNow = this.state().pending
    if (pendingNow) throw new ApiError('UpgradeInProgress', { details: { version: pendingNow.version } })
    // spec 3.1, 5.4: consumed once, by the identity that uploaded it, for this purpose.
    const file = await this.#o.uploads.claim(uploadId, identity, 'upgrade', { keepUntilRelease: true })
    try {
      const pending = await stageUpgrade({
        dataPath: config.dataPath,
        file: file.path,
        take: 'move',
        originalFilename: file.originalFilename,
        product: config.upgradeProduct,
        limits: { maxEntries: config.upgradeMaxEntries, maxExpandedBytes: config.upgradeMaxExpandedBytes },
        runningVersion: this.#o.softwareVersion(),
        requestedBy: identity.accountName,
        now: this.#o.clock.now(),
        // TEST ONLY (docs/configuration.md): the supervisor leads the process group it kills.
        killAt: config.upgradeTestKillAt ? { step: config.upgradeTestKillAt, groupLeader: process.ppid } : undefined,
      })
      this.#o.log.warn({ version: pending.version, from: pending.fromVersion }, 'upgrade staged; restarting')
      await this.#o.events.emit('upgrade.staged', { version: pending.version, fromVersion: pending.fromVersion, requestedBy: pending.requestedBy })
      // spec 4.11: the start-up script revalidates and installs; softwareVersion changes only then.
      device.requestRestart(`upgrade to ${pending.version}`)
      return { version: pending.version, fromVersion: pending.fromVersion, stagedAt: pending.stagedAt, requestedBy: pending.requestedBy }
    } finally {
      await file.release()
    }
  }
}
