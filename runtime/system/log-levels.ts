import type { Logger } from '../../shared/handler.ts'
import type { LogLevel } from '../../shared/system/types.ts'

/** What pino adds to the Logger contract that levels need. */
type PinoLogger = Logger & { level: string; onChild: (child: PinoLogger) => void; bindings(): Record<string, unknown> }

const ORDER: LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']
const areaOf = (bindings: Record<string, unknown> | undefined) => {
  const area = bindings?.area ?? bindings?.component
  return typeof area === 'string' ? area : null
}

/**
 * Log levels applied without a restart (docs/system.md "System settings", Debug). pino children made
 * without options inherit their parent's level methods through the prototype, so setting the
 * root's level reaches every logger that never set its own. The loggers of areas
 * (`log.child({ area })`, `{ component }`) are registered as pino makes them (its `onChild`
 * hook): an area switched to debug gets its own level, the more verbose of the root's and
 * `debug`, and every area's level is set again on each change.
 */
export class LogLevels {
  readonly #root: PinoLogger
  readonly #areas = new Map<string, WeakRef<PinoLogger>[]>()
  readonly #debugAreas = new Set<string>()

  constructor(root: Logger) {
    this.#root = root as PinoLogger
    this.#root.onChild = (child) => this.#register(child)
  }

  get level(): LogLevel {
    return this.#root.level as LogLevel
  }

  /** Areas seen so far, sorted. */
  areas(): string[] {
    return [...this.#areas.keys()].sort()
  }

  isDebug(area: string): boolean {
    return this.#debugAreas.has(area)
  }

  apply(level: LogLevel, debugAreas: Iterable<string>): void {
    this.#root.level = level
    this.#debugAreas.clear()
    for (const area of debugAreas) this.#debugAreas.add(area)
    for (const [area, refs] of this.#areas) {
      const alive = refs.filter((ref) => ref.deref())
      this.#areas.set(area, alive)
      for (const ref of alive) ref.deref()!.level = this.#levelOf(area)
    }
  }

  #levelOf(area: string): LogLevel {
    const root = this.level
    return this.#debugAreas.has(area) && ORDER.indexOf(root) > ORDER.indexOf('debug') ? 'debug' : root
  }

  #register(child: PinoLogger): void {
    const area = areaOf(child.bindings())
    if (!area || area === areaOf((Object.getPrototypeOf(child) as PinoLogger).bindings?.())) return
    const refs = this.#areas.get(area) ?? []
    refs.push(new WeakRef(child))
    this.#areas.set(area, refs)
    if (this.#debugAreas.has(area)) child.level = this.#levelOf(area)
  }
}
