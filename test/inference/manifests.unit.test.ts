import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { defaultManifestDir, loadManifest, loadManifests } from '../../models/load-manifests.ts'
import { generateSsdAnchors } from '../../runtime/sidecar/pipeline/anchors.ts'
import { projectRoot } from './helpers.ts'

describe('pipeline manifests', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'man-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const faceFile = path.join(defaultManifestDir(projectRoot), 'face-detection.json')
  const variant = (edit: (m: Record<string, any>) => void, from = faceFile) => {
    const m = JSON.parse(readFileSync(from, 'utf8'))
    edit(m)
    const file = path.join(dir, `m-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(file, JSON.stringify(m))
    return file
  }

  it('the shipped manifests validate and resolve their models: package files, build outputs, operator uploads', () => {
    const all = loadManifests(defaultManifestDir(projectRoot), projectRoot, '/data-dir')
    expect([...all.keys()].sort()).toEqual([
      'body-recognition', 'face-analysis', 'face-detection', 'face-detection-near', 'face-presence', 'face-recognition', 'no-safety-helmet-analysis',
      'object-detection', 'person-detector', 'person-segmentation', 'text-ocr', 'things-recognition',
    ])
    for (const { manifest, modelPaths } of all.values())
      for (const [key, file] of Object.entries(modelPaths)) {
        const source = manifest.models[key]!.source
        if ('package' in source) expect(file).toMatch(/node_modules\/.+\.onnx$/)
        else if ('build' in source) expect(file).toBe(path.join(projectRoot, 'dist', 'models', `${source.build}.onnx`))
        else if ('uploaded' in source) expect(file).toBe(path.join('/data-dir', 'models', `${source.uploaded}.onnx`))
        else throw new Error(`shipped manifests do not use package-relative files (${key})`)
      }
    expect(all.get('no-safety-helmet-analysis')!.modelPaths['helmet-classifier']).toBe('/data-dir/models/helmet-classifier.onnx')
  })

  it('model sources: a build output or upload name cannot be a path', () => {
    expect(() => loadManifest(variant((m) => { m.models['blazeface-back'].source = { build: '../escape' } }), projectRoot)).toThrow(/invalid pipeline manifest/)
    expect(() => loadManifest(variant((m) => { m.models['blazeface-back'].source = { uploaded: 'a/b' } }), projectRoot)).toThrow(/invalid pipeline manifest/)
    expect(() => loadManifest(variant((m) => { m.models['blazeface-back'].source = { build: 'x', package: 'y' } }), projectRoot)).toThrow(/invalid pipeline manifest/)
  })

  it('rejects unknown properties, dangling references and files outside the package', () => {
    expect(() => loadManifest(variant((m) => { m.nodes[0].treshold = 0.5 }), projectRoot)).toThrow(/invalid pipeline manifest/)
    expect(() => loadManifest(variant((m) => { m.nodes[0].model = 'missing' }), projectRoot)).toThrow(/unknown model missing/)
    expect(() => loadManifest(variant((m) => { m.result.targets = 'nope' }), projectRoot)).toThrow(/not a detector/)
    expect(() => loadManifest(variant((m) => { m.models['blazeface-back'].source.file = '../sharp/package.json' }), projectRoot)).toThrow(/invalid pipeline manifest/)
    expect(() => loadManifest(variant((m) => { m.models['blazeface-back'].source.package = 'no-such-package-xyz' }), projectRoot)).toThrow(/not installed/)
  })

  it('rejects a detector that keeps classes its label map does not name', () => {
    const personFile = path.join(defaultManifestDir(projectRoot), 'person-detector.json')
    expect(() => loadManifest(variant(() => undefined, personFile), projectRoot)).not.toThrow()
    expect(() => loadManifest(variant((m) => {
      m.nodes[0].decoder.classes = [2]
      m.nodes[0].labels = ['car']
    }, personFile), projectRoot)).toThrow(/keeps classes 2 that labels \(1 entries, by class index\) does not name/)
  })

  it('a recognizer must follow a detector that gives the eye keypoints it names', () => {
    const file = path.join(defaultManifestDir(projectRoot), 'face-recognition.json')
    expect(() => loadManifest(variant(() => undefined, file), projectRoot)).not.toThrow()
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = { eyes: [0, 6], scale: 3.2, eyeLine: 0.4 } }, file), projectRoot)).toThrow(/detector face has no keypoints 0, 6/)
    expect(() => loadManifest(variant((m) => { m.nodes.reverse() }, file), projectRoot)).toThrow(/recognizer recognizer must come after detector face/)
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = { eyes: [0, 1], scale: 0, eyeLine: 0.4 } }, file), projectRoot)).toThrow(/invalid pipeline manifest/)
    expect(() => loadManifest(variant((m) => { m.nodes[1].gallery = 'cats' }, file), projectRoot)).toThrow(/invalid pipeline manifest/)
  })

  it('a recognizer aligned onto a template names detector keypoints, one template point each, and draws at the input size', () => {
    const file = path.join(defaultManifestDir(projectRoot), 'face-recognition.json')
    const chip = { kind: 'template', keypoints: [0, 1, 2, 3], template: [[0.22549, 0.21599], [0.75476, 0.21599], [0.490127, 0.515625], [0.490127, 0.80766]], padding: 0.25 }
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = chip }, file), projectRoot)).not.toThrow()
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = { ...chip, keypoints: [0, 1, 2, 6] } }, file), projectRoot)).toThrow(/detector face has no keypoints 0, 1, 2, 6/)
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = { ...chip, keypoints: [0, 1, 2] } }, file), projectRoot)).toThrow(/align has 3 keypoints and 4 template points/)
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = chip; delete m.nodes[1].input.width }, file), projectRoot)).toThrow(/input's width and height/)
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = { ...chip, padding: -0.1 } }, file), projectRoot)).toThrow(/invalid pipeline manifest/)
    expect(() => loadManifest(variant((m) => { m.nodes[1].align = { ...chip, kind: 'eyes' } }, file), projectRoot)).toThrow(/invalid pipeline manifest/)
  })

  it('a recognizer without a detector describes the whole image and may be the result\'s targets; it cannot align', () => {
    const file = path.join(defaultManifestDir(projectRoot), 'things-recognition.json')
    expect(() => loadManifest(variant(() => undefined, file), projectRoot)).not.toThrow()
    expect(() => loadManifest(variant((m) => { m.nodes[0].align = { eyes: [0, 1], scale: 3, eyeLine: 0.4 } }, file), projectRoot)).toThrow(/align needs a detector/)
    const face = path.join(defaultManifestDir(projectRoot), 'face-recognition.json')
    // a recognizer of a detector's targets is not a target list of its own
    expect(() => loadManifest(variant((m) => { m.result.targets = 'recognizer' }, face), projectRoot)).toThrow(/not a detector node/)
  })

  it('generates MediaPipe SSD anchors: 896 for both BlazeFace models, cell centres on the feature maps', () => {
    const all = loadManifests(defaultManifestDir(projectRoot), projectRoot)
    for (const id of ['face-detection', 'face-detection-near']) {
      const node = all.get(id)!.manifest.nodes[0]!
      if (node.action !== 'detector' || node.decoder.kind !== 'ssd-anchors') throw new Error('unexpected manifest')
      const anchors = generateSsdAnchors(node.decoder.anchors)
      expect(anchors).toHaveLength(16 * 16 * 2 + 8 * 8 * 6)
      expect(anchors[0]).toEqual({ xCenter: 0.5 / 16, yCenter: 0.5 / 16, width: 1, height: 1 })
      expect(anchors[512]).toEqual({ xCenter: 0.5 / 8, yCenter: 0.5 / 8, width: 1, height: 1 })
      expect(anchors[895]).toEqual({ xCenter: 7.5 / 8, yCenter: 7.5 / 8, width: 1, height: 1 })
    }
  })
})
