/**
 * taskConfig.detectorInputSize through the real sidecar (docs/detection.md "Detector input
 * size"): a person-detector task at 320 runs centernet-320 (loaded when the first task
 * chooses it), finds the people counted on the six sample photos as that model does, and a
 * size the algorithm does not offer is InvalidParam, the task left as it was.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveManifest, validateManifest } from '../../models/load-manifests.ts'
import type { PipelineManifest } from '../../models/manifest-schema.ts'
import { InferenceEngine } from '../../runtime/sidecar/engine.ts'
import type { DetectionResultCore } from '../../shared/inference/types.ts'
import { limits, projectRoot, rejection, samplePath, samplePeople, startTestInference, type TestInference } from './helpers.ts'

const shipped = JSON.parse(readFileSync(path.join(projectRoot, 'models/manifests/person-detector.json'), 'utf8')) as PipelineManifest
const boxes = (result: DetectionResultCore) => result.areaList.flatMap((a) => a.targetList).map((t) => t.box)

describe('person detector input size per task', () => {
  let inf: TestInference
  /** The same detector written as a 320 manifest of its own (as before the setting), in process. */
  const engine = new InferenceEngine({ projectRoot, manifestDir: false, intraOpThreads: 1, limits })
  beforeAll(async () => {
    inf = await startTestInference()
    const { inputSizes: _, ...node } = shipped.nodes[0] as PipelineManifest['nodes'][number] & { inputSizes?: unknown }
    const manifest = validateManifest({ ...shipped, algorithmId: 'p320', models: { centernet: { source: { build: 'centernet-320' }, format: 'onnx' } },
      nodes: [{ ...node, input: { ...(node as { input: object }).input, width: 320, height: 320 } }] }, 'p320')
    engine.define(resolveManifest(manifest, 'p320', { projectRoot }))
    await engine.load('p320', 'p320')
  }, 120_000)
  afterAll(async () => { await inf?.close(); await engine.close() })

  const centernetSessions = async () => (await inf.inference.stats()).sessions.map((s) => path.basename(s.model)).filter((m) => m.startsWith('centernet')).sort()

  it('512 by default; a task at 320 loads centernet-320 and finds what that model finds', async () => {
    await inf.inference.load('p512', 'person-detector')
    expect(await centernetSessions()).toEqual(['centernet.onnx'])
    await inf.inference.load('p320', 'person-detector', { detectorInputSize: 320 })
    expect(await centernetSessions()).toEqual(['centernet-320.onnx', 'centernet.onnx'])
    let found320 = 0, found512 = 0
    for (const [i, people] of samplePeople.entries()) {
      const image = { kind: 'path' as const, path: samplePath(i + 1) }
      const at320 = await inf.inference.detect({ handle: 'p320', image, overlay: false })
      const own = await engine.detect({ handle: 'p320', image, overlay: false })
      expect(boxes(at320.result), `sample${i + 1}.jpg`).toEqual(boxes(own.result))
      const at512 = await inf.inference.detect({ handle: 'p512', image, overlay: false })
      found320 += Math.min(people, boxes(at320.result).length)
      found512 += Math.min(people, boxes(at512.result).length)
    }
    // 22 people counted on the six photos: 21 found at 512, 19 at 320 (docs/detection.md "Detector input size").
    expect(found512).toBe(21)
    expect(found320).toBe(19)
  }, 120_000)

  it('a size not offered is InvalidParam with the sizes offered; the task keeps its size', async () => {
    const refused = await rejection(inf.inference.load('p320', 'person-detector', { detectorInputSize: 400 }))
    expect(refused).toMatchObject({ id: 'InvalidParam', item: { messageKey: 'api.error.InvalidParam', details: { field: '/taskConfig/detectorInputSize', value: 400, offered: [512, 320] } } })
    const { result } = await inf.inference.detect({ handle: 'p320', image: { kind: 'path', path: samplePath(1) }, overlay: false })
    const own = await engine.detect({ handle: 'p320', image: { kind: 'path', path: samplePath(1) }, overlay: false })
    expect(boxes(result)).toEqual(boxes(own.result))
    const face = await rejection(inf.inference.load('faces', 'face-detection', { detectorInputSize: 320 }))
    expect(face).toMatchObject({ id: 'InvalidParam', item: { details: { field: '/taskConfig/detectorInputSize', offered: [] } } })
  }, 60_000)
})
