/**
 * The int8 person detector (dist/models/centernet-int8.onnx, models/convert/quantize/) in the
 * device's pipeline: on the six sample photos it finds the people counted on them
 * (3, 3, 3, 4, 5, 4), as the float model does, and MODEL_PRECISION=fp32 loads the float file.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveManifest, validateManifest } from '../../models/load-manifests.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import { limits, projectRoot, samplePath, samplePeople } from './helpers.ts'

const shipped = JSON.parse(readFileSync(path.join(projectRoot, 'models/manifests/person-detector.json'), 'utf8')) as PipelineManifest
/** The person detector with its CenterNet entry at `precision`, under `algorithmId`. */
const variant = (algorithmId: string, precision: 'fp32' | 'int8', setting?: 'fp32') => {
  const manifest = validateManifest({ ...shipped, algorithmId, models: { centernet: { ...shipped.models.centernet!, precision } } }, algorithmId)
  return resolveManifest(manifest, algorithmId, { projectRoot, ...(setting ? { precision: setting } : {}) })
}

type Target = { box: { x: number; y: number; width: number; height: number }; confidence: { label: string }[] }
const targetsOf = (result: unknown) => (result as { areaList: { targetList: Target[] }[] }).areaList.flatMap((a) => a.targetList)

describe('int8 person detector', () => {
  const engine = new InferenceEngine({ projectRoot, manifestDir: false, intraOpThreads: 1, limits })
  beforeAll(async () => {
    for (const [id, precision] of [['int8', 'int8'], ['fp32', 'fp32']] as const) {
      engine.define(variant(id, precision))
      await engine.load(id, id)
    }
  })
  afterAll(async () => { await engine.close() })

  it('loads centernet-int8.onnx for precision int8, centernet.onnx for fp32 and under MODEL_PRECISION=fp32', () => {
    expect(path.basename(variant('a', 'int8').modelPaths.centernet!)).toBe('centernet-int8.onnx')
    expect(path.basename(variant('b', 'fp32').modelPaths.centernet!)).toBe('centernet.onnx')
    expect(path.basename(variant('c', 'int8', 'fp32').modelPaths.centernet!)).toBe('centernet.onnx')
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
