/** The build step converts into the output folder once, and again only when the key changes. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as ort from 'onnxruntime-node'
import { afterAll, describe, expect, it } from 'vitest'
import { buildModels } from '../../models/convert/build-models.ts'
import { modelSources } from '../../models/convert/sources.ts'

const root = join(import.meta.dirname, '../..')
const emotion = modelSources.filter((s) => s.name === 'emotion')
const dirs: string[] = []
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
})

describe('buildModels', () => {
  it('writes a loadable model, then reuses it while the source and converter are unchanged', async () => {
    const out = await mkdtemp(join(tmpdir(), 'convert-'))
    dirs.push(out)
    const [first] = await buildModels(emotion, out, root)
    expect(first).toEqual({ name: 'emotion', path: join(out, 'emotion.onnx'), cached: false })

    const session = await ort.InferenceSession.create(first!.path)
    const result = await session.run({ input_1: new ort.Tensor('float32', new Float32Array(64 * 64), [1, 64, 64, 1]) })
    await session.release()
    const probabilities = Array.from(result.Identity!.data as Float32Array)
    expect(probabilities).toHaveLength(7)
    expect(probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5)

    const [second] = await buildModels(emotion, out, root)
    expect(second!.cached).toBe(true)

    // a different key (as after a package update or a converter change) converts again
    await writeFile(`${first!.path}.sha256`, 'stale')
    const [third] = await buildModels(emotion, out, root)
    expect(third!.cached).toBe(false)
    expect(await readFile(`${first!.path}.sha256`, 'utf8')).not.toBe('stale')
  })
})

describe('buildModels with a graph written in code', () => {
  it('writes the dlib ResNet from face-api\'s weights: a [n,150,150,3] → [n,128] model, reused while unchanged', async () => {
    const out = await mkdtemp(join(tmpdir(), 'convert-written-'))
    dirs.push(out)
    const resnet = modelSources.filter((s) => s.name === 'face-recognition-resnet')
    expect(resnet.map((s) => s.modelJson)).toEqual([{ written: 'dlib-resnet' }])
    const [first] = await buildModels(resnet, out, root)
    expect(first).toEqual({ name: 'face-recognition-resnet', path: join(out, 'face-recognition-resnet.onnx'), cached: false })
    const session = await ort.InferenceSession.create(first!.path)
    expect(session.inputNames).toEqual(['input'])
    const result = await session.run({ input: new ort.Tensor('float32', new Float32Array(2 * 150 * 150 * 3), [2, 150, 150, 3]) })
    await session.release()
    expect(result.descriptor!.dims).toEqual([2, 128])
    const [second] = await buildModels(resnet, out, root)
    expect(second!.cached).toBe(true)
  }, 120_000)
})
