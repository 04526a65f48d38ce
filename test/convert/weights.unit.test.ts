/** Weight decoding of model.json manifests: float32, int32, float16 and affine uint8/uint16 quantization. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { halfToFloat, loadTfGraph } from '../../models/convert/tfjs-graph.ts'

const dirs: string[] = []
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
})

describe('halfToFloat', () => {
  it('decodes normal, subnormal, zero, infinite and NaN halves', () => {
    expect(halfToFloat(0x3c00)).toBe(1)
    expect(halfToFloat(0xc000)).toBe(-2)
    expect(halfToFloat(0x3555)).toBeCloseTo(0.33325, 5)
    expect(halfToFloat(0x0001)).toBe(2 ** -24)
    expect(halfToFloat(0x0000)).toBe(0)
    expect(halfToFloat(0x7c00)).toBe(Infinity)
    expect(halfToFloat(0xfc00)).toBe(-Infinity)
    expect(halfToFloat(0x7e00)).toBeNaN()
  })
})

describe('loadTfGraph', () => {
  it('decodes every weight of a two-shard manifest in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weights-'))
    dirs.push(dir)
    const f32 = Buffer.from(new Float32Array([1.5, -2]).buffer)
    const i32 = Buffer.from(new Int32Array([7, -3, 1]).buffer)
    const f16 = Buffer.from(new Uint16Array([0x3c00, 0xc000]).buffer)
    const u8 = Buffer.from([0, 10, 255])
    const u16 = Buffer.from(new Uint16Array([0, 1000]).buffer)
    const all = Buffer.concat([f32, i32, f16, u8, u16])
    // the group's bytes are split across two shard files at an arbitrary point
    await writeFile(join(dir, 'group1-shard1of2.bin'), all.subarray(0, 13))
    await writeFile(join(dir, 'group1-shard2of2.bin'), all.subarray(13))
    const manifest = {
      format: 'graph-model',
      modelTopology: { node: [] },
      weightsManifest: [
        {
          paths: ['group1-shard1of2.bin', 'group1-shard2of2.bin'],
          weights: [
            { name: 'f32', shape: [2], dtype: 'float32' },
            { name: 'i32', shape: [3], dtype: 'int32' },
            { name: 'f16', shape: [2], dtype: 'float32', quantization: { dtype: 'float16', original_dtype: 'float32' } },
            { name: 'u8', shape: [3], dtype: 'float32', quantization: { dtype: 'uint8', scale: 0.5, min: -1, original_dtype: 'float32' } },
            { name: 'u16', shape: [1, 2], dtype: 'float32', quantization: { dtype: 'uint16', scale: 0.01, min: 2, original_dtype: 'float32' } },
          ],
        },
      ],
    }
    await writeFile(join(dir, 'model.json'), JSON.stringify(manifest))
    const graph = await loadTfGraph(join(dir, 'model.json'))
    const values = (name: string) => Array.from(graph.weights.get(name)!.data)
    expect(values('f32')).toEqual([1.5, -2])
    expect(values('i32')).toEqual([7, -3, 1])
    expect(values('f16')).toEqual([1, -2])
    expect(values('u8')).toEqual([-1, 4, 126.5])
    expect(values('u16')[0]).toBeCloseTo(2)
    expect(values('u16')[1]).toBeCloseTo(12)
    expect(graph.weights.get('u16')!.shape).toEqual([1, 2])
    expect(graph.weights.get('i32')!.dtype).toBe('int32')
    expect(graph.weightData.byteLength).toBe(all.length)
  })
})
