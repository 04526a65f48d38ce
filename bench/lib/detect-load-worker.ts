/**
 * The device's HTTP clients of the detect benchmarks, in a process of their own
 * (bench/lib/load-process.ts): `{ run, clients, expectTargets }` → `{ seconds }` for `run`
 * flows (bench/lib/detect-flow.ts) from `clients` concurrent clients; `{ once: imagePath }` →
 * `{ ms }` for one flow of that image (one-client latency).
 */
import { readFileSync } from 'node:fs'
import { detectFlow, type DetectFlowTarget } from './detect-flow.ts'
import { BenchClient } from './http-client.ts'

interface Init { url: string; mtk: string; imagePath: string; taskId: string; algorithmCode: string; fullPicture?: 'data' | 'url' }
const init = JSON.parse(process.argv[2]!) as Init
const client = new BenchClient(init.url, { mtk: init.mtk })
const target: DetectFlowTarget = { image: readFileSync(init.imagePath), taskId: init.taskId, algorithmCode: init.algorithmCode, ...(init.fullPicture ? { fullPicture: init.fullPicture } : {}) }

const images = new Map<string, Buffer>()

process.on('message', async (message: { run: number; clients: number; expectTargets: number } | { once: string }) => {
  try {
    if ('once' in message) {
      let image = images.get(message.once)
      if (!image) images.set(message.once, (image = readFileSync(message.once)))
      const started = performance.now()
      await detectFlow(client, { ...target, image })
      process.send!({ ms: performance.now() - started })
      return
    }
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: message.clients }, async () => {
      while (next++ < message.run) {
        const targets = await detectFlow(client, target)
        if (targets !== message.expectTargets) throw new Error(`expected ${message.expectTargets} targets, got ${targets}`)
      }
    }))
    process.send!({ seconds: (performance.now() - started) / 1000 })
  } catch (error) {
    process.send!({ error: String((error as Error)?.stack ?? error) })
  }
})
process.on('disconnect', () => { client.close(); process.exit(0) })
process.send!({ ready: true })
