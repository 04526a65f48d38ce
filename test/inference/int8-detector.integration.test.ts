/**
 * The int8 person detector (dist/models/centernet-int8.onnx, models/convert/quantize/) in the
 * device's pipeline: on the six sample photos it finds the people counted on them
 * (3, 3, 3, 4, 5, 4), as the float model does, and MODEL_PRECISION=fp32 loads the float file.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveManifest, validateManifest } from '../../models/load-manifests.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import { limits, projectRoot, samplePath, samplePeople } from './helpers.ts'

const shipped = JSON.parse(readFileSync(path.join(projectRoot, 'models/manifests/person-detector.json'), 'utf8')) as PipelineManifest
/** The person detector with its CenterNet entry at `precision` (and input `size`), under `algorithmId`. */
const variant = (algorithmId: string, precision: 'fp32' | 'int8', setting?: 'fp32', size = 512) => {
  const model = { ...shipped.models.centernet!, precision, ...(size !== 512 ? { source: { build: `centernet-${size}` } } : {}) }
  // One size only: the shipped node's other sizes (inputSizes) name models this variant has not.
  const nodes = shipped.nodes.map((n) => {
    if (n.action !== 'detector') return n
    const { inputSizes: _, ...node } = n
    return { ...node, input: { ...n.input, width: size, height: size } }
  })
  const manifest = validateManifest({ ...shipped, algorithmId, models: { centernet: model }, nodes }, algorithmId)
  return resolveManifest(manifest, algorithmId, { projectRoot, ...(setting ? { precision: setting } : {}) })
}

type Target = { box: { x: number; y: number; width: number; height: number }; confidence: { label: string }[] }
const targetsOf = (result: unknown) => (result as { areaList: { targetList: Target[] }[] }).areaList.flatMap((a) => a.targetList)

describe('int8 person detector', () => {
  const engine = new InferenceEngine({ projectRoot, manifestDir: false, intraOpThreads: 1, limits })
  beforeAll(async () => {
    for (const [id, precision, size] of [['int8', 'int8', 512], ['fp32', 'fp32', 512], ['fp32-320', 'fp32', 320]] as const) {
      engine.define(variant(id, precision, undefined, size))
      await engine.load(id, id)
    }
  })
  afterAll(async () => { await engine.close() })

  it('loads centernet-int8.onnx for precision int8, centernet.onnx for fp32 and under MODEL_PRECISION=fp32', () => {
    expect(path.basename(variant('a', 'int8').modelPaths.centernet!)).toBe('centernet-int8.onnx')
    expect(path.basename(variant('b', 'fp32').modelPaths.centernet!)).toBe('centernet.onnx')
    expect(path.basename(variant('c', 'int8', 'fp32').modelPaths.centernet!)).toBe('centernet.onnx')
    expect(path.basename(variant('d', 'int8', undefined, 320).modelPaths.centernet!)).toBe('centernet-320-int8.onnx')
  })

  it('at a 320 input (centernet-320): persons on the photos, boxes inside them (docs/detection.md "Detector input size")', async () => {
    let found = 0
    for (let n = 1; n <= 6; n++) {
      const { result } = await engine.detect({ handle: 'fp32-320', image: { kind: 'path', path: samplePath(n) }, overlay: false })
      const targets = targetsOf(result)
      const { width, height } = await sharp(samplePath(n)).metadata()
      for (const t of targets) {
        expect(t.box.x).toBeGreaterThanOrEqual(0)
        expect(t.box.y).toBeGreaterThanOrEqual(0)
        expect(t.box.x + t.box.width).toBeLessThanOrEqual(width!)
        expect(t.box.y + t.box.height).toBeLessThanOrEqual(height!)
      }
      found += Math.min(targets.length, samplePeople[n - 1]!)
    }
    // measured: 19 of the 22 people (the 512 model: 21); small people are what 320 misses
    expect(found).toBeGreaterThanOrEqual(19)
  })

  it('finds the people counted on the sample photos, no more boxes than people, like fp32', async () => {
    const found = { int8: 0, fp32: 0 }
    for (let n = 1; n <= 6; n++) {
      for (const handle of ['int8', 'fp32'] as const) {
        const { result } = await engine.detect({ handle, image: { kind: 'path', path: samplePath(n) }, overlay: false })
        const targets = targetsOf(result)
        expect(targets.every((t) => t.confidence[0]!.label === 'person')).toBe(true)
        expect(targets.length, `${handle} sample${n}`).toBeLessThanOrEqual(samplePeople[n - 1]!)
        found[handle] += targets.length
      }
    }
    // 22 people on the six photos; the float model finds 21 (models/README.md, "Which COCO detector")
    expect(found.fp32).toBe(21)
    expect(found.int8).toBeGreaterThanOrEqual(20)
  })
})
