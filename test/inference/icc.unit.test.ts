import { readFileSync } from 'node:fs'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../runtime/sidecar/image/decode.ts'
import { iccDescription, isSrgbProfile } from '../../runtime/sidecar/image/icc.ts'
import { limits, samplePath } from './helpers.ts'

const profileOf = async (bytes: Buffer) => (await sharp(bytes).metadata()).icc
const tagged = (profile: string) =>
  sharp({ create: { width: 16, height: 8, channels: 3, background: '#20c060' } }).withIccProfile(profile).jpeg({ quality: 95 }).toBuffer()

describe('embedded colour profiles: an sRGB one is not applied, any other is', () => {
  it('reads the sample photo\'s profile as sRGB and decodes it to the pixels the transform gives', async () => {
    const bytes = readFileSync(samplePath(1))
    const icc = await profileOf(bytes)
    expect(iccDescription(icc!)).toBe('sRGB IEC61966-2.1')
    expect(isSrgbProfile(icc)).toBe(true)
    const decoded = await decodeImage({ kind: 'bytes', bytes }, limits)
    // sharp's default applies the embedded profile: the same pixels, byte for byte.
    expect(decoded.data.equals(await sharp(bytes).removeAlpha().raw().toBuffer())).toBe(true)
  })

  it('applies a Display P3 profile', async () => {
    const bytes = await tagged('p3')
    const icc = await profileOf(bytes)
    expect(iccDescription(icc!)).toMatch(/P3/)
    expect(isSrgbProfile(icc)).toBe(false)
    const decoded = await decodeImage({ kind: 'bytes', bytes }, limits)
    expect(decoded.data.equals(await sharp(bytes).raw().toBuffer())).toBe(true)
    expect(decoded.data.equals(await sharp(bytes, { ignoreIcc: true }).raw().toBuffer())).toBe(false)
  })

  it('answers false without a profile, with one too short to hold a tag table, and with a desc tag pointing outside it', async () => {
    expect(isSrgbProfile(undefined)).toBe(false)
    expect(isSrgbProfile(Buffer.alloc(64))).toBe(false)
    expect(iccDescription(Buffer.alloc(64))).toBeNull()
    const broken = Buffer.from((await profileOf(readFileSync(samplePath(1))))!)
    for (let i = 0; i < broken.readUInt32BE(128); i++)
      if (broken.toString('latin1', 132 + i * 12, 136 + i * 12) === 'desc') broken.writeUInt32BE(broken.length + 100, 136 + i * 12)
    expect(isSrgbProfile(broken)).toBe(false)
  })
})
