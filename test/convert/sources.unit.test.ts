/** Every model the build converts is covered by an equivalence test. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { modelSources } from '../../models/convert/sources.ts'

describe('models/convert/sources.ts', () => {
  it('lists models whose equivalence is tested', () => {
    const tests = ['equivalence.integration.test.ts', 'equivalence-detectors.integration.test.ts', 'faceapi-resnet.integration.test.ts'].map((f) => readFileSync(join(import.meta.dirname, f), 'utf8')).join('\n')
    const untested = modelSources.map((s) => s.name).filter((name) => !tests.includes(`'${name}'`))
    expect(untested).toEqual([])
  })
})
