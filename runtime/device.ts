import path from 'node:path'
import type { DeviceHost, InferenceReport, InferenceReporter, LogFileHealth, LogPage, LogQuery, PipelineDescription } from '../shared/aihost/types.ts'
import type { Logger } from '../shared/handler.ts'
import { queryLogFiles } from './logs/query.ts'

/** The log folder (spec: every piece of state under DATA_DIR). */
export const logDirOf = (dataPath: string) => path.join(dataPath, 'logs')

/**
 * `ctx.device`: the runtime's view of itself. The inference service registers its reporter;
 * the server registers how a restart is carried out (graceful stop, exit code for the supervisor).
 */
export class RuntimeDeviceHost implements DeviceHost {
  private reporter: InferenceReporter | null = null
  private restartHook: ((reason: string) => void) | null = null
  private pipelines: ((algorithmId: string) => PipelineDescription | null) | null = null
  readonly supervised: boolean

  constructor(private readonly dataPath: string, private readonly log: Logger, private readonly logFileHealth: (() => LogFileHealth) | null = null, env: NodeJS.ProcessEnv = process.env) {
    // runtime/start.mjs sets it for the child it supervises.
    this.supervised = env.DEVICE_SUPERVISED === '1'
  }

  async inference(): Promise<InferenceReport | null> {
    if (!this.reporter) return null
    try {
      return await this.reporter()
    } catch (error) {
      this.log.warn({ err: error }, 'inference report failed')
      return null
    }
  }

  setInferenceReporter(reporter: InferenceReporter) {
    this.reporter = reporter
  }

  pipeline(algorithmId: string): PipelineDescription | null {
    return this.pipelines?.(algorithmId) ?? null
  }

  setPipelineSource(source: (algorithmId: string) => PipelineDescription | null) {
    this.pipelines = source
  }

  logFile(): LogFileHealth | null {
    return this.logFileHealth?.() ?? null
  }

  queryLogs(query: LogQuery): Promise<LogPage> {
    return queryLogFiles(logDirOf(this.dataPath), query)
  }

  onRestart(hook: (reason: string) => void) {
    this.restartHook = hook
  }

  requestRestart(reason: string) {
    this.log.warn({ reason }, 'restart requested')
    // After the response has been written: the hook stops the server gracefully.
    setTimeout(() => this.restartHook?.(reason), 200).unref()
  }
}
