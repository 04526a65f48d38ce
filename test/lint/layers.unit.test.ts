import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

// The import boundaries between layers (eslint.config.mjs, `layerRules`): each case lints one
// import line as if it were written in a file at that path of the repository.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const eslint = new ESLint({ cwd: root })

/** The messages of rule `ruleId` (and parse errors) for `code` as the file `file` (relative to the repository root). */
async function ruleErrors(file: string, code: string, ruleId = 'no-restricted-imports'): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: path.join(root, file) })
  return result!.messages.filter((m) => m.ruleId === ruleId || m.fatal).map((m) => m.message)
}
const layerErrors = (file: string, code: string) => ruleErrors(file, code)

/** The message of the layer a file belongs to (eslint.config.mjs). */
const LAYERS: [prefix: string, message: string][] = [
  ['functions/', 'functions/ may import only shared/'],
  ['shared/', 'shared/ must not import runtime/'],
  ['runtime/console/', 'The console reaches the device only through runtime/client/'],
  ['runtime/cli/', 'The CLI reaches the device only through runtime/client/'],
  ['runtime/sidecar/', 'The inference sidecar is a process of its own'],
]

const rejects = (file: string, code: string) => it(`${file}: rejects ${code}`, async () => {
  const errors = await layerErrors(file, code)
  expect(errors).toHaveLength(1)
  expect(errors[0]).toContain(LAYERS.find(([prefix]) => file.startsWith(prefix))![1])
})

const accepts = (file: string, code: string) => it(`${file}: accepts ${code}`, async () => {
  expect(await layerErrors(file, code)).toEqual([])
})

describe('functions/ imports only shared/', () => {
  rejects('functions/atomic/probe.ts', `import { x } from '../../runtime/x.ts'`)
  rejects('functions/atomic/probe.ts', `import { x } from '../../models/action-catalogue.ts'`)
  rejects('functions/atomic/probe.ts', `import type { X } from '../../test/helpers/device.ts'`)
  rejects('functions/atomic/probe.ts', `export { x } from '../../bench/lib/report.ts'`)
  rejects('functions/atomic/probe.ts', `import { x } from '../../../elsewhere/x.ts'`)
  rejects('functions/probe.ts', `import { x } from '../runtime/x.ts'`)
  rejects('functions/a/b/c/probe.ts', `import { x } from '../../../../runtime/x.ts'`)
  // Handlers reach state through a service on ctx, never the database.
  rejects('functions/atomic/probe.ts', `import { events } from '../../shared/db/schema/index.ts'`)
  rejects('functions/atomic/probe.ts', `import type { Db } from '../../shared/db/types.ts'`)
  rejects('functions/atomic/probe.ts', `import { eq } from 'drizzle-orm'`)
  rejects('functions/atomic/probe.ts', `import { drizzle } from 'drizzle-orm/libsql'`)
  rejects('functions/atomic/probe.ts', `import { createClient } from '@libsql/client'`)

  accepts('functions/atomic/probe.ts', `import { defineHandler } from '../../shared/handler.ts'`)
  accepts('functions/atomic/probe.ts', `import { atomicActionCatalogue } from '../../shared/models/action-catalogue.ts'`)
  accepts('functions/atomic/probe.ts', `import { x } from './sibling.ts'`)
  accepts('functions/atomic/probe.ts', `import { x } from '../aihost/common.ts'`)
  accepts('functions/atomic/probe.ts', `import { Type } from '@sinclair/typebox'`)
  accepts('functions/a/b/c/probe.ts', `import { x } from '../../../../shared/x.ts'`)
})

describe('shared/ never imports runtime/, functions/, test/ or bench/', () => {
  rejects('shared/http/probe.ts', `import { x } from '../../runtime/x.ts'`)
  rejects('shared/http/probe.ts', `import type { X } from '../../runtime/types/x.ts'`)
  rejects('shared/http/probe.ts', `export * from '../../runtime/x.ts'`)
  rejects('shared/http/probe.ts', `import { x } from '../../functions/atomic/actionList.ts'`)
  rejects('shared/http/probe.ts', `import { x } from '../../test/helpers/device.ts'`)
  rejects('shared/http/probe.ts', `import { x } from '../../bench/lib/report.ts'`)
  rejects('shared/probe.ts', `import { x } from '../runtime/x.ts'`)

  accepts('shared/http/probe.ts', `import { x } from '../db/client.ts'`)
  accepts('shared/http/probe.ts', `import { PipelineManifest } from '../../models/manifest-schema.ts'`)
  accepts('shared/http/probe.ts', `import { readFileSync } from 'node:fs'`)
  accepts('shared/probe.ts', `import { x } from './config.ts'`)
})

describe('runtime/console/ and runtime/cli/ reach the device only through runtime/client/', () => {
  rejects('runtime/console/probe.ts', `import { x } from '../../runtime/cameras/service.ts'`)
  rejects('runtime/console/probe.ts', `import { x } from '../cameras/service.ts'`)
  rejects('runtime/console/probe.ts', `import { x } from '../server.ts'`)
  rejects('runtime/console/views/probe.ts', `import { x } from '../../cameras/service.ts'`)
  rejects('runtime/console/views/probe.ts', `import { x } from '../../../functions/atomic/actionList.ts'`)
  rejects('runtime/console/views/probe.ts', `import { x } from '../../../models/manifest-schema.ts'`)
  rejects('runtime/cli/probe.ts', `import { x } from '../services.ts'`)
  rejects('runtime/cli/fleet/probe.ts', `import { x } from '../../http/app.ts'`)
  rejects('runtime/cli/probe.ts', `import { x } from '../console/format.ts'`)

  accepts('runtime/console/probe.ts', `import { DeviceClient } from '../client/index.ts'`)
  accepts('runtime/console/probe.ts', `import { x } from './format.ts'`)
  accepts('runtime/console/probe.ts', `import { x } from '../../shared/errors/api-error.ts'`)
  accepts('runtime/console/views/probe.ts', `import { x } from '../format.ts'`)
  accepts('runtime/console/views/probe.ts', `import { DeviceClient } from '../../client/index.ts'`)
  accepts('runtime/console/views/probe.ts', `import { html } from 'htm/preact'`)
  accepts('runtime/cli/fleet/probe.ts', `import { x } from '../output.ts'`)
  accepts('runtime/cli/fleet/probe.ts', `import { DeviceClient } from '../../client/index.ts'`)
})

describe('runtime/sidecar/ imports nothing of the server process', () => {
  rejects('runtime/sidecar/probe.ts', `import { x } from '../server.ts'`)
  rejects('runtime/sidecar/probe.ts', `import { x } from '../inference/client.ts'`)
  rejects('runtime/sidecar/probe.ts', `import { x } from '../../functions/atomic/actionList.ts'`)
  rejects('runtime/sidecar/pipeline/probe.ts', `import { x } from '../../log.ts'`)

  accepts('runtime/sidecar/probe.ts', `import { x } from './server.ts'`)
  accepts('runtime/sidecar/probe.ts', `import { loadManifest } from '../../models/load-manifests.ts'`)
  accepts('runtime/sidecar/probe.ts', `import { x } from '../../shared/config.ts'`)
  accepts('runtime/sidecar/pipeline/probe.ts', `import { x } from '../session-pool.ts'`)
  accepts('runtime/sidecar/pipeline/decoders/probe.ts', `import { x } from '../../../../models/manifest-schema.ts'`)
})

describe('other areas are not confined', () => {
  accepts('runtime/cameras/probe.ts', `import { x } from '../streams/service.ts'`)
  accepts('test/lint/probe.ts', `import { x } from '../../runtime/server.ts'`)
  accepts('bench/probe.ts', `import { x } from '../runtime/server.ts'`)
})

describe('the server process loads sharp on first use (runtime/load-sharp.ts); only the sidecar imports it', () => {
  const sharpErrors = (file: string, code: string) => ruleErrors(file, code, '@typescript-eslint/no-restricted-imports')
  for (const file of ['runtime/galleries/probe.ts', 'runtime/probe.ts', 'functions/atomic/probe.ts', 'shared/probe.ts'])
    it(`${file}: rejects a value import of sharp`, async () => {
      const errors = await sharpErrors(file, `import sharp from 'sharp'`)
      expect(errors).toHaveLength(1)
      expect(errors[0]).toContain('loadSharp()')
    })
  it('accepts a type import of sharp in the server, and a value import in the sidecar and in runtime/load-sharp.ts', async () => {
    expect(await sharpErrors('runtime/galleries/probe.ts', `import type Sharp from 'sharp'`)).toEqual([])
    expect(await sharpErrors('runtime/sidecar/image/probe.ts', `import sharp from 'sharp'`)).toEqual([])
    expect(await sharpErrors('runtime/load-sharp.ts', `import sharp from 'sharp'`)).toEqual([])
  })
})
