import { fork } from 'node:child_process'
import path from 'node:path'
import { build } from 'esbuild'
import { BENCH_DIR } from './report.ts'

export interface LoadProcess {
  /** Runs `run` flows from `clients` concurrent clients; resolves with the elapsed seconds. */
  run(run: number, clients: number, expectTargets: number): Promise<number>
  /** One flow of the image at `imagePath` from one client; resolves with its milliseconds, timed in the load process. */
  once(imagePath: string): Promise<number>
  stop(): Promise<void>
}

/**
 * Starts bench/lib/detect-load-worker.ts as a plain node process (bundled by esbuild, as the
 * device is). The load generator shares the device's two cores; in the benchmark's own process,
 * whose heap also holds the in-process baseline and the TypeScript loader, every major garbage
 * collection the clients' ~210 KB answers cause would mark that whole heap, CPU the device would
 * lose to its load generator (~20 % of the clients' CPU, measured with perf).
 */
export async function startLoadProcess(init: { url: string; mtk: string; imagePath: string; taskId: string; algorithmCode: string; fullPicture?: 'data' | 'url' }): Promise<LoadProcess> {
  const outfile = path.join(path.dirname(BENCH_DIR), 'dist', 'bench', 'detect-load-worker.mjs')
  await build({
    entryPoints: [path.join(BENCH_DIR, 'lib', 'detect-load-worker.ts')],
    outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning',
  })
  const child = fork(outfile, [JSON.stringify(init)], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const next = () => new Promise<{ ready?: boolean; seconds?: number; ms?: number; error?: string }>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`load process exited with ${code}`))
    child.once('exit', onExit)
    child.once('message', (message) => { child.off('exit', onExit); resolve(message as never) })
  })
  await next()
  /** One request to the load process and its answer; its failure is thrown here. */
  const ask = async (message: object) => {
    const answer = next()
    child.send(message)
    const reply = await answer
    if (reply.error !== undefined) throw new Error(`load process: ${reply.error}`)
    return reply
  }
  return {
    run: async (run, clients, expectTargets) => (await ask({ run, clients, expectTargets })).seconds!,
    once: async (imagePath) => (await ask({ once: imagePath })).ms!,
    async stop() {
      if (child.connected) child.disconnect()
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
    },
  }
}
