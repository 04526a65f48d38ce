/**
 * The detector input size a task chooses (taskConfig.detectorInputSize, docs/detection.md
 * "Detector input size"): what a manifest offers, what a task runs with, and the manifest
 * checks of `inputSizes`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { detectorInput, offeredInputSizes, sizeOnlyModels } from '../../models/input-size.ts'
import { defaultManifestDir, loadManifest, loadManifests } from '../../models/load-manifests.ts'
import type { DetectorNode } from '../../models/manifest-schema.ts'
import { analysisMaxSide } from '../../runtime/streams/analysis-size.ts'
import { validateInput } from '../../shared/schema/validate.ts'
import { TaskConfigSchema } from '../../shared/tasks/types.ts'
import { projectRoot } from './helpers.ts'

const manifests = loadManifests(defaultManifestDir(projectRoot), projectRoot)
const manifest = (id: string) => manifests.get(id)!.manifest
const person = manifest('person-detector').nodes[0] as DetectorNode

describe('detector input size per task', () => {
  it('the person detector offers 512 (its own) and 320 (centernet-320); other algorithms offer none', () => {
    expect(offeredInputSizes(manifest('person-detector'))).toEqual([512, 320])
    expect(offeredInputSizes(manifest('face-detection'))).toEqual([])
    expect(offeredInputSizes(manifest('object-detection'))).toEqual([])
    expect(path.basename(manifests.get('person-detector')!.modelPaths['centernet-320']!)).toBe('centernet-320.onnx')
  })

  it('a task runs the size it chose, with the model converted at that size; the default otherwise', () => {
    expect(detectorInput(person, {})).toEqual({ input: person.input, model: 'centernet' })
    expect(detectorInput(person, { detectorInputSize: 512 })).toEqual({ input: person.input, model: 'centernet' })
    const small = detectorInput(person, { detectorInputSize: 320 })
    expect(small.model).toBe('centernet-320')
    expect([small.input.width, small.input.height, small.input.resize]).toEqual([320, 320, 'letterbox'])
    expect(small.input.normalization).toEqual(person.input.normalization)
  })

  it('the 320 model is loaded only when a task chooses it', () => {
    expect([...sizeOnlyModels(manifest('person-detector'))]).toEqual(['centernet-320'])
    expect([...sizeOnlyModels(manifest('face-analysis'))]).toEqual([])
  })

  it('stream frames are still read at 512 at least (their snapshots), whatever the size', () => {
    expect(analysisMaxSide(manifest('person-detector'), { detectorInputSize: 320 })).toBe(512)
    expect(analysisMaxSide(manifest('person-detector'), {})).toBe(512)
  })

  it('taskConfig.detectorInputSize is an integer from 32 to 4096', () => {
    for (const bad of [0, 31, 4097, 320.5, '320', null])
      expect(() => validateInput(TaskConfigSchema, { detectorInputSize: bad }), JSON.stringify(bad)).toThrow()
    expect(validateInput(TaskConfigSchema, { detectorInputSize: 320 })).toEqual({ detectorInputSize: 320 })
  })
})

describe('manifest checks of inputSizes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'size-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const file = path.join(defaultManifestDir(projectRoot), 'person-detector.json')
  const variant = (edit: (m: { models: Record<string, unknown>; nodes: Record<string, any>[] }) => void) => {
    const m = JSON.parse(readFileSync(file, 'utf8'))
    edit(m)
    const out = path.join(dir, `m-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(out, JSON.stringify(m))
    return () => loadManifest(out, projectRoot)
  }

  it('refuses an unknown model, the node\'s own size, a size twice, a non-square input', () => {
    expect(variant((m) => { m.nodes[0]!.inputSizes = [{ size: 320, model: 'nope' }] })).toThrow(/input size 320 names unknown model nope/)
    expect(variant((m) => { m.nodes[0]!.inputSizes = [{ size: 512, model: 'centernet-320' }] })).toThrow(/input size 512 is its own input's/)
    expect(variant((m) => { m.nodes[0]!.inputSizes = [{ size: 320, model: 'centernet-320' }, { size: 320, model: 'centernet' }] })).toThrow(/listed twice/)
    expect(variant((m) => { m.nodes[0]!.input.height = 384 })).toThrow(/square input/)
    expect(variant((m) => { m.nodes[0]!.inputSizes = [{ size: 16, model: 'centernet-320' }] })).toThrow()
    expect(variant(() => {})).not.toThrow()
  })
})
