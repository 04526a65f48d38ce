import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig, settings } from '../../shared/config.ts'

describe('typed configuration', () => {
  it('has the defaults of spec 8', () => {
    const config = loadConfig({})
    const MB = 1024 * 1024
    expect(config).toMatchObject({
      port: 8080,
      jsonBodyLimitBytes: MB,
      multipartBodyLimitBytes: 10 * MB,
      backstopBodyLimitBytes: 12 * MB,
      uploadMaxChunkBytes: 8 * MB,
      uploadMaxTotalBytes: 0,
      uploadMaxChunks: 0,
      uploadMetadataBudgetBytes: 64 * MB,
      uploadIdleTimeoutMs: 30 * 60 * 1000,
      uploadAbsoluteTimeoutMs: 0,
      uploadReserveBytes: 512 * MB,
      uploadReservePercent: 0,
      wsPort: 9000,
    })
    expect(config.databaseUrl).toBe(`file:${path.resolve('data', 'device.db')}`)
  })

  it('takes environment variables over the JSON file over defaults', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'config-'))
    const file = path.join(dir, 'config.json')
    writeFileSync(file, JSON.stringify({ port: 9999, host: '127.0.0.2', jsonBodyLimitBytes: 2048 }))
    const config = loadConfig({ CONFIG_FILE: file, PORT: '7000', DATA_DIR: dir, LIBSQL_URL: 'libsql://db.example:8080' })
    expect(config.port).toBe(7000)
    expect(config.host).toBe('127.0.0.2')
    expect(config.jsonBodyLimitBytes).toBe(2048)
    expect(config.dataPath).toBe(dir)
    expect(config.databaseUrl).toBe('libsql://db.example:8080')
  })

  it('refuses malformed values, naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/)
    expect(() => loadConfig({ JSON_BODY_LIMIT_BYTES: '-1' })).toThrow(/JSON_BODY_LIMIT_BYTES/)
    expect(() => loadConfig({ UPLOAD_MAX_CHUNKS: '1.5' })).toThrow(/UPLOAD_MAX_CHUNKS/)
    expect(() => loadConfig({ INITIAL_PASSWORD_CHANGE_REQUIRED: 'maybe' })).toThrow(/INITIAL_PASSWORD_CHANGE_REQUIRED/)
    expect(() => loadConfig({ CONFIG_FILE: '/nonexistent/config.json' })).toThrow(/CONFIG_FILE/)
  })

  it('is documented: docs/configuration.md names every environment variable', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8')
    const missing = Object.values(settings).map((s) => s.env).filter((env) => !doc.includes(`\`${env}\``))
    expect(missing).toEqual([])
  })
})
