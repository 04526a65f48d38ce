import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { RESTART_EXIT_CODE } from '../../shared/aihost/types.ts'
import { settings } from '../../shared/config.ts'
import { EXECUTABLE } from '../../infra/release/build.mjs'

const root = path.resolve(import.meta.dirname, '../..')
const unit = readFileSync(path.join(root, 'infra/edge-device.service'), 'utf8')
const dockerfile = readFileSync(path.join(root, 'infra/Dockerfile'), 'utf8')
const directives = (text: string, name: string) => [...text.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((m) => m[1])

describe('service unit and container image of the release', () => {
  it('the unit passes systemd-analyze verify (ExecStart pointed at an executable that exists here)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'unit-'))
    try {
      const file = path.join(dir, 'edge-device.service')
      writeFileSync(file, unit.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`))
      const result = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' })
      expect(result.error).toBeUndefined()
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('the unit starts the release executable as the container does, restarts on the upgrade code and writes only its data folder', () => {
    expect(directives(unit, 'ExecStart')).toEqual([`/opt/edge-device/${EXECUTABLE}`])
    expect(dockerfile).toContain(`ENTRYPOINT ["/opt/edge-device/${EXECUTABLE}"]`)
    expect(dockerfile).toContain(`CMD ["/opt/edge-device/${EXECUTABLE}", "--probe"]`)
    expect(directives(unit, 'RestartForceExitStatus')).toEqual([String(RESTART_EXIT_CODE)])
    const dataDir = directives(unit, 'Environment').find((e) => e!.startsWith(`${settings.dataDir.env}=`))!.split('=')[1]
    expect(directives(unit, 'ReadWritePaths')).toEqual([dataDir])
    expect(directives(unit, 'ProtectSystem')).toEqual(['strict'])
    expect(directives(unit, 'NoNewPrivileges')).toEqual(['yes'])
    expect(dockerfile).toContain(`ENV ${settings.dataDir.env}=${dataDir}`)
  })
})
