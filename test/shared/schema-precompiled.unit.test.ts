/**
 * runtime/schema/precompile.ts: the validators generated at build time (ajv standalone code)
 * answer exactly as the ones shared/schema/validate.ts compiles at run time: same verdict,
 * same errors, same defaults filled in.
 */
import { build } from 'esbuild'
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ValidateFunction } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultManifestDir } from '../../models/load-manifests.ts'
import { PipelineManifest } from '../../models/manifest-schema.ts'
import { PRECOMPILED_SCHEMAS, precompiledModuleSource } from '../../runtime/schema/precompile.ts'
import { compileSchema } from '../../shared/schema/validate.ts'
import { Sample } from './fixtures/precompile-schemas.ts'

const root = path.resolve(import.meta.dirname, '../..')
const schemaDir = path.join(root, 'shared/schema')
const manifestDir = defaultManifestDir(root)
const shipped = readdirSync(manifestDir).filter((name) => name.endsWith('.json')).sort()
const readManifest = (name: string) => JSON.parse(readFileSync(path.join(manifestDir, name), 'utf8')) as Record<string, any>

let dir = ''
let manifestValidator: ValidateFunction
let sampleValidator: ValidateFunction

beforeAll(async () => {
  // The generated module bundled as build.mjs bundles it into the server: npm packages stay
  // imports, resolved by Node from a node_modules beside it.
  const source = precompiledModuleSource([
    ...PRECOMPILED_SCHEMAS,
    { name: 'Sample', module: path.relative(schemaDir, path.join(root, 'test/shared/fixtures/precompile-schemas.ts')), schema: Sample, dialect: 'draft-07' },
  ])
  dir = mkdtempSync(path.join(os.tmpdir(), 'precompiled-'))
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'))
  const result = await build({ stdin: { contents: source, resolveDir: schemaDir, loader: 'js' }, bundle: true, platform: 'node', format: 'esm', packages: 'external', write: false, logLevel: 'warning' })
  const file = path.join(dir, 'precompiled.mjs')
  writeFileSync(file, result.outputFiles[0]!.contents)
  const { precompiled } = await import(pathToFileURL(file).href) as { precompiled: Record<string, Map<object, ValidateFunction>> }
  // Bundled apart from this test, the module holds its own copies of the schema objects: its validators are taken in order.
  const validators = [...precompiled['draft-07']!.values()]
  expect(validators).toHaveLength(2)
  expect(precompiled['2020-12']!.size).toBe(0)
  ;[manifestValidator, sampleValidator] = validators as [ValidateFunction, ValidateFunction]
})
afterAll(() => { if (dir) rmSync(dir, { recursive: true, force: true }) })

/** Verdict, errors and the value after validation (defaults filled in) of both validators on copies of `value`. */
function both(validate: ValidateFunction, schema: object, value: unknown) {
  const run = (v: ValidateFunction) => {
    const copy = structuredClone(value)
    const valid = v(copy)
    return { valid, errors: v.errors ?? null, value: copy }
  }
  return { built: run(validate), compiled: run(compileSchema(schema)) }
}

describe('precompiled validators', () => {
  it('the server precompiles the pipeline-manifest schema that loadManifests validates every start with', () => {
    expect(PRECOMPILED_SCHEMAS.map((s) => [s.name, s.schema, s.dialect])).toEqual([['PipelineManifest', PipelineManifest, 'draft-07']])
  })

  it.each(shipped)('shipped manifest %s: valid for both, same value after validation', (name) => {
    const { built, compiled } = both(manifestValidator, PipelineManifest, readManifest(name))
    expect(built.valid).toBe(true)
    expect(built).toEqual(compiled)
  })

  it('broken manifests: the same errors, in the same order', () => {
    const broken: Array<(m: Record<string, any>) => void> = [
      (m) => { delete m.algorithmId },
      (m) => { m.algorithmId = 'Bad Id' },
      (m) => { m.unknownField = 1 },
      (m) => { m.nodes[0].action = 'teleport' },
      (m) => { m.nodes = 'none' },
      (m) => { m.models = {}; m.result = null; m.version = 7 },
    ]
    for (const edit of broken) {
      const manifest = readManifest('face-detection.json')
      edit(manifest)
      const { built, compiled } = both(manifestValidator, PipelineManifest, manifest)
      expect(built.valid).toBe(false)
      expect(built.errors!.length).toBeGreaterThan(0)
      expect(built).toEqual(compiled)
    }
    expect(both(manifestValidator, PipelineManifest, null)).toEqual(expect.objectContaining({ built: expect.objectContaining({ valid: false }) }))
  })

  it('formats, defaults, unions and string lengths (ajv runtime helpers) answer as compiled', () => {
    const cases: unknown[] = [
      { pageNum: 1 },
      { pageNum: 2, pageSize: 5, kind: 'b', at: '2026-11-28T09:00:00Z', name: 'ab' },
      { pageNum: 0, kind: 'c', at: 'yesterday', name: '\u{1F600}' },
      { pageNum: 1, name: '\u{1F600}\u{1F600}' },
      { pageNum: 1, name: 'abcde', extra: true },
      'not an object',
    ]
    const verdicts = cases.map((value) => {
      const { built, compiled } = both(sampleValidator, Sample, value)
      expect(built).toEqual(compiled)
      return built.valid
    })
    expect(verdicts).toEqual([true, true, false, true, false, false])
    expect(both(sampleValidator, Sample, { pageNum: 1 }).built.value).toEqual({ pageNum: 1, pageSize: 10 })
  })
})
