import { X509Certificate } from 'node:crypto'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { createSecureContext } from 'node:tls'
import { invalidParam } from '../../shared/errors/index.ts'
import type { MqttSettings } from '../../shared/events/types.ts'

/** PEM files of a CA bundle, a client certificate or a key are small; anything larger is not one. */
const MAX_PEM_BYTES = 1024 * 1024

export interface MqttTlsMaterial {
  ca?: Buffer
  cert?: Buffer
  key?: Buffer
}

const FIELDS = [
  { setting: 'caFile', option: 'ca', what: 'a CA certificate bundle (PEM)' },
  { setting: 'certFile', option: 'cert', what: 'a client certificate (PEM)' },
  { setting: 'keyFile', option: 'key', what: 'a private key (PEM)' },
] as const

/**
 * Reads and checks the TLS files of the MQTT settings before anything is stored or applied:
 * each one a readable regular file of PEM size, certificate and key given together, and the
 * whole accepted by OpenSSL as a TLS context (parseable certificates, a key that matches the
 * certificate). Refusals are InvalidParam naming the field; no file content is echoed.
 */
export function loadMqttTls(settings: Pick<MqttSettings, 'caFile' | 'certFile' | 'keyFile'>): MqttTlsMaterial {
  if ((settings.certFile === '') !== (settings.keyFile === ''))
    throw invalidParam(settings.certFile === '' ? '/certFile' : '/keyFile', 'a client certificate and its key are given together')
  const material: MqttTlsMaterial = {}
  for (const field of FIELDS) {
    const file = settings[field.setting]
    if (file) material[field.option] = readPem(`/${field.setting}`, file, field.what)
  }
  // One file at a time, so that a refusal names the file OpenSSL could not use; then the pair.
  if (material.ca) checkCertificates('/caFile', material.ca)
  check('/certFile', { cert: material.cert })
  check('/keyFile', { key: material.key })
  if (material.cert) check('/keyFile', { cert: material.cert, key: material.key }, 'does not match the client certificate')
  return material
}

function readPem(pointer: string, file: string, what: string): Buffer {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    throw invalidParam(pointer, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); give the path of ${what} readable by the device`)
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) throw invalidParam(pointer, `is not a regular file; give the path of ${what}`)
    if (stats.size > MAX_PEM_BYTES) throw invalidParam(pointer, `is ${stats.size} bytes, more than ${MAX_PEM_BYTES} for ${what}`)
    const bytes = Buffer.alloc(stats.size)
    let read = 0
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read)
      if (n === 0) break
      read += n
    }
    if (!bytes.subarray(0, read).includes('-----BEGIN ')) throw invalidParam(pointer, `holds no PEM block; give the path of ${what}`)
    return bytes.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}

/** OpenSSL skips what it cannot parse in a CA bundle: every block must be a certificate, and there must be one. */
function checkCertificates(pointer: string, pem: Buffer) {
  const blocks = pem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) throw invalidParam(pointer, 'holds no PEM certificate; give the path of a CA certificate bundle (PEM)')
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block)
    } catch (error) {
      throw invalidParam(pointer, `certificate ${index + 1} of the bundle cannot be parsed: ${String((error as Error)?.message ?? error).slice(0, 200)}`)
    }
  })
}

function check(pointer: string, options: MqttTlsMaterial, mismatch?: string) {
  if (!Object.values(options).some(Boolean)) return
  try {
    createSecureContext(options)
  } catch (error) {
    const field = FIELDS.find((f) => `/${f.setting}` === pointer)!
    throw invalidParam(pointer, mismatch ?? `is not usable as ${field.what}: ${String((error as Error)?.message ?? error).split('\n')[0]!.slice(0, 200)}`)
  }
}
