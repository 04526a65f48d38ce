/**
 * Hostile and malformed algorithm packages (manifest schema, model files present,
 * entries that cannot escape their folder, size bounds), against the real registry, database
 * and file system. Every refusal leaves the registry and the package folder as they were.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { create } from 'tar'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import yazl from 'yazl'
import { ApiError } from '../../shared/errors/index.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'
import { tarGz } from '../helpers/tarball.ts'

const root = path.resolve(import.meta.dirname, '../..')
const faceManifest = () => JSON.parse(readFileSync(path.join(root, 'models/manifests/face-detection.json'), 'utf8'))

async function zipOf(files: Record<string, Buffer | string>, options: Record<string, { mode?: number }> = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile()
  for (const [name, data] of Object.entries(files)) zip.addBuffer(Buffer.from(data), name, options[name] ?? {})
  zip.end()
  const chunks: Buffer[] = []
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** yazl refuses unsafe names, so they are written as same-length safe ones and patched in place. */
function patchName(zip: Buffer, from: string, to: string): Buffer {
  expect(from.length).toBe(to.length)
  return Buffer.from(zip.toString('latin1').split(from).join(to), 'latin1')
}

describe('algorithm packages refused (runtime/algorithms)', () => {
  let rt: TestRuntime
  let work: string
  let n = 0
  const packagesDir = () => path.join(rt.config.dataPath, 'algorithm-packages')
  const ids = () => rt.runtime.services.algorithms.list().map((e) => e.manifest.algorithmId)
  let before: string[]

  const install = async (bytes: Buffer, replace = false) => {
    const file = path.join(work, `package-${n++}`)
    writeFileSync(file, bytes)
    return rt.runtime.services.algorithms.installArchive(file, { replace })
  }
  const refusal = async (bytes: Buffer) => {
    const error = await install(bytes).then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    return (error as ApiError).item
  }

  beforeAll(async () => {
    rt = await createTestRuntime({ algorithmPackageMaxEntries: 8, algorithmPackageMaxExpandedBytes: 64 * 1024 })
    work = mkdtempSync(path.join(tmpdir(), 'algorithm-packages-'))
    before = ids()
  })
  afterEach(() => {
    expect(ids()).toEqual(before)
    expect(readdirSync(packagesDir())).toEqual([])
  })
  afterAll(async () => {
    await rt.close()
    rmSync(work, { recursive: true, force: true })
  })

  it('files that are not a zip or tar.gz', async () => {
    expect(await refusal(Buffer.from('just text, not an archive'))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid', details: { reason: 'not a zip or tar.gz archive' } })
    expect(await refusal(Buffer.from([0x1f, 0x8b, 1, 2, 3]))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid' })
    const truncated = (await zipOf({ 'manifest.json': JSON.stringify(faceManifest()) })).subarray(0, 40)
    expect(await refusal(truncated)).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid' })
  })

  it('zip entries that climb out, are absolute, or are links', async () => {
    const manifest = JSON.stringify({ ...faceManifest(), algorithmId: 'evil' })
    const climbing = patchName(await zipOf({ 'manifest.json': manifest, 'xx/evil.txt': 'x' }), 'xx/evil.txt', '../evil.txt')
    expect(await refusal(climbing)).toMatchObject({ messageKey: 'api.error.AlgorithmPackageUnsafe', recommendedAction: 'CHECK_UPLOAD_PARAMETERS' })
    const absolute = patchName(await zipOf({ 'manifest.json': manifest, 'xtmp/evil.txt': 'x' }), 'xtmp/evil.txt', '/tmp/evil.txt')
    expect(await refusal(absolute)).toMatchObject({ messageKey: 'api.error.AlgorithmPackageUnsafe' })
    const link = await zipOf({ 'manifest.json': manifest, 'models/m.onnx': '/etc/passwd' }, { 'models/m.onnx': { mode: 0o120777 } })
    expect(await refusal(link)).toMatchObject({ messageKey: 'api.error.AlgorithmPackageUnsafe', details: { entry: 'models/m.onnx' } })
  })

  it('tar.gz entries that climb out or are links', async () => {
    const dir = path.join(work, 'tar-src')
    mkdirSync(path.join(dir, 'pkg', 'models'), { recursive: true })
    writeFileSync(path.join(dir, 'pkg', 'manifest.json'), JSON.stringify({ ...faceManifest(), algorithmId: 'evil' }))
    symlinkSync('/etc/passwd', path.join(dir, 'pkg', 'models', 'm.onnx'))
    const linked = path.join(work, 'linked.tar.gz')
    await create({ gzip: true, cwd: dir, file: linked }, ['pkg'])
    expect(await refusal(readFileSync(linked))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageUnsafe', details: { entry: 'pkg/models/m.onnx' } })

    writeFileSync(path.join(work, 'outside.txt'), 'x')
    const climbing = path.join(work, 'climbing.tar.gz')
    await create({ gzip: true, cwd: path.join(dir, 'pkg'), file: climbing, preservePaths: true }, ['manifest.json', '../../outside.txt'])
    expect(await refusal(readFileSync(climbing))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageUnsafe' })
    expect(readdirSync(path.dirname(rt.config.dataPath))).not.toContain('outside.txt')
  })

  it('tar.gz links chained through other links (each harmless as text): every link is refused', async () => {
    const chained = tarGz([
      { path: 'manifest.json', data: JSON.stringify({ ...faceManifest(), algorithmId: 'evil' }) },
      { path: 'd/up', type: 'SymbolicLink', linkpath: '..' },
      { path: 'x', type: 'SymbolicLink', linkpath: 'd/up/..' },
    ])
    expect(await refusal(chained)).toMatchObject({ messageKey: 'api.error.AlgorithmPackageUnsafe', details: { entry: 'd/up', reason: 'entry type SymbolicLink is not allowed' } })
  })

  it('manifests that are missing, invalid, or name files the package lacks', async () => {
    expect(await refusal(await zipOf({ 'models/a.onnx': 'x' }))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid' })
    expect(await refusal(await zipOf({ 'manifest.json': '{ not json' }))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid', details: { reason: 'manifest.json is not valid JSON' } })
    const misspelt = await refusal(await zipOf({ 'manifest.json': JSON.stringify({ ...faceManifest(), algorithmId: 'typo', suplier: 'x' }) }))
    expect(misspelt).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid' })
    expect(misspelt.details.reason).toContain('must NOT have additional properties')
    const lacking = faceManifest()
    lacking.algorithmId = 'lacking'
    lacking.models[Object.keys(lacking.models)[0]!].source = { path: 'models/face.onnx' }
    const missing = await refusal(await zipOf({ 'manifest.json': JSON.stringify(lacking) }))
    expect(missing).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid', details: { algorithmId: 'lacking' } })
    expect(missing.details.reason).toContain('models/face.onnx is missing')
    const stray = await refusal(await zipOf({ 'manifest.json': JSON.stringify({ ...faceManifest(), algorithmId: 'stray' }), 'README.txt': 'hello' }))
    expect(stray).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid', details: { entry: 'README.txt' } })
    const twice = path.join(work, 'twice')
    for (const folder of ['a', 'b']) {
      mkdirSync(path.join(twice, folder), { recursive: true })
      writeFileSync(path.join(twice, folder, 'manifest.json'), JSON.stringify({ ...faceManifest(), algorithmId: 'twin' }))
    }
    const twins = path.join(work, 'twins.tar.gz')
    await create({ gzip: true, cwd: twice, file: twins }, ['a', 'b'])
    expect(await refusal(readFileSync(twins))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageInvalid', details: { algorithmId: 'twin' } })
  })

  it('packages over the entry or size bound, and ids that exist', async () => {
    const many = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`files/f${i}.txt`, 'x']))
    expect(await refusal(await zipOf({ 'manifest.json': JSON.stringify(faceManifest()), ...many }))).toMatchObject({ messageKey: 'api.error.AlgorithmPackageTooLarge', details: { limitEntries: 8 } })
    const big = await refusal(await zipOf({ 'manifest.json': JSON.stringify(faceManifest()), 'models/big.onnx': Buffer.alloc(100 * 1024) }))
    expect(big).toMatchObject({ messageKey: 'api.error.AlgorithmPackageTooLarge', details: { limitBytes: String(64 * 1024) } })
    expect(await refusal(await zipOf({ 'manifest.json': JSON.stringify(faceManifest()) }))).toMatchObject({ messageKey: 'api.error.AlgorithmExists', details: { algorithmId: 'face-detection' } })
  })
})
