/**
 * Splits ffmpeg's fragmented MP4 output (`-movflags frag_keyframe+empty_moov+default_base_moof`)
 * into the init segment (ftyp + moov) and fragments (moof + mdat), and tells which fragments
 * start with a key frame: a viewer that joins must start at one (ISO/IEC 14496-12).
 */

export interface Fragment {
  moof: Buffer
  mdat: Buffer
  keyframe: boolean
  /** tfdt's baseMediaDecodeTime, in the track's timescale. */
  decodeTime: number
}

/** Largest box accepted: a fragment holds about 100 ms of video. */
const MAX_BOX_BYTES = 32 * 1024 * 1024
/** sample_is_non_sync_sample in the sample flags (ISO/IEC 14496-12 8.8.3.1). */
const NON_SYNC = 0x10000

interface Box { type: string; start: number; end: number; body: number }

/** The child boxes of `buf[from, to)`. */
function* boxes(buf: Buffer, from: number, to: number): Generator<Box> {
  let at = from
  while (at + 8 <= to) {
    let size = buf.readUInt32BE(at)
    let body = at + 8
    if (size === 1) {
      if (at + 16 > to) return
      size = Number(buf.readBigUInt64BE(at + 8))
      body = at + 16
    }
    if (size < body - at || at + size > to) return
    yield { type: buf.toString('latin1', at + 4, at + 8), start: at, end: at + size, body }
    at += size
  }
}

const child = (buf: Buffer, parent: Box | undefined, type: string) =>
  parent ? [...boxes(buf, parent.body, parent.end)].find((b) => b.type === type) : undefined

const path = (buf: Buffer, root: Box, types: string[]) => types.reduce<Box | undefined>((box, type) => child(buf, box, type), root)

/** The `default_sample_flags` of the track extends box (moov/mvex/trex), 0 when absent. */
function trexFlags(moov: Buffer): number {
  const root = [...boxes(moov, 0, moov.length)].find((b) => b.type === 'moov')
  const trex = root && path(moov, root, ['mvex', 'trex'])
  return trex && trex.end - trex.body >= 24 ? moov.readUInt32BE(trex.body + 20) : 0
}

/** Where a moof's tfdt box is and its version (0: 32-bit time, 1: 64-bit). */
function tfdtOf(moof: Buffer): { at: number; version: number } | null {
  const root = [...boxes(moof, 0, moof.length)][0]
  const tfdt = root && path(moof, root, ['traf', 'tfdt'])
  return tfdt ? { at: tfdt.body + 4, version: moof[tfdt.body]! } : null
}

function decodeTimeOf(moof: Buffer): number {
  const tfdt = tfdtOf(moof)
  if (!tfdt) return 0
  return tfdt.version === 1 ? Number(moof.readBigUInt64BE(tfdt.at)) : moof.readUInt32BE(tfdt.at)
}

/**
 * A copy of the moof with its decode time moved back by `offset` (a viewer's stream starts
 * at 0 whenever it joins: players start at time 0 and would wait for the gap to play out).
 */
export function shiftedMoof(moof: Buffer, offset: number): Buffer {
  const tfdt = tfdtOf(moof)
  if (!tfdt || offset === 0) return moof
  const copy = Buffer.from(moof)
  if (tfdt.version === 1) copy.writeBigUInt64BE(BigInt(Math.max(0, decodeTimeOf(moof) - offset)), tfdt.at)
  else copy.writeUInt32BE(Math.max(0, decodeTimeOf(moof) - offset), tfdt.at)
  return copy
}

/** The flags of the first sample of a moof: trun's first_sample_flags, its first per-sample flags, tfhd's default, else trex's. */
export function firstSampleFlags(moof: Buffer, trexDefault: number): number | null {
  const root = [...boxes(moof, 0, moof.length)][0]
  const traf = root && child(moof, root, 'traf')
  const tfhd = child(moof, traf, 'tfhd')
  const trun = child(moof, traf, 'trun')
  if (!tfhd || !trun) return null
  const trunFlags = moof.readUInt32BE(trun.body) & 0xffffff
  let at = trun.body + 8 + (trunFlags & 0x1 ? 4 : 0)
  if (trunFlags & 0x4) return moof.readUInt32BE(at)
  at += (trunFlags & 0x100 ? 4 : 0) + (trunFlags & 0x200 ? 4 : 0)
  if (trunFlags & 0x400) return moof.readUInt32BE(at)
  const tfhdFlags = moof.readUInt32BE(tfhd.body) & 0xffffff
  if (tfhdFlags & 0x20) {
    const offset = tfhd.body + 8 + (tfhdFlags & 0x1 ? 8 : 0) + (tfhdFlags & 0x2 ? 4 : 0) + (tfhdFlags & 0x8 ? 4 : 0) + (tfhdFlags & 0x10 ? 4 : 0)
    return moof.readUInt32BE(offset)
  }
  return trexDefault
}

/**
 * The RFC 6381 codec of the init segment's video sample entry, e.g. `avc1.4d401e`; for a
 * sample entry other than H.264 its four-character code (`hev1`, `mp4v`).
 */
export function codecOf(init: Buffer): string | null {
  const moov = [...boxes(init, 0, init.length)].find((b) => b.type === 'moov')
  const stsd = moov && path(init, moov, ['trak', 'mdia', 'minf', 'stbl', 'stsd'])
  if (!stsd) return null
  // stsd: version/flags, entry count, then the sample entries.
  const entry = [...boxes(init, stsd.body + 8, stsd.end)][0]
  if (!entry) return null
  if (entry.type !== 'avc1' && entry.type !== 'avc3') return entry.type
  // VisualSampleEntry: 8 bytes of SampleEntry, 70 of visual fields, then its boxes.
  const avcC = [...boxes(init, entry.body + 78, entry.end)].find((b) => b.type === 'avcC')
  if (!avcC) return entry.type
  const hex = (at: number) => init[at]!.toString(16).padStart(2, '0')
  return `${entry.type}.${hex(avcC.body + 1)}${hex(avcC.body + 2)}${hex(avcC.body + 3)}`
}

/** The video track's timescale (moov/trak/mdia/mdhd, ISO/IEC 14496-12 8.4.2): decode times count in 1/timescale s. */
export function timescaleOf(init: Buffer): number | null {
  const moov = [...boxes(init, 0, init.length)].find((b) => b.type === 'moov')
  const mdhd = moov && path(init, moov, ['trak', 'mdia', 'mdhd'])
  if (!mdhd) return null
  const at = mdhd.body + (init[mdhd.body] === 1 ? 20 : 12)
  return at + 4 <= mdhd.end ? init.readUInt32BE(at) : null
}

export class Fmp4Splitter {
  /** ftyp + moov, once both arrived. */
  init: Buffer | null = null
  private pending: Buffer[] = []
  private pendingBytes = 0
  private head: Buffer[] = []
  private moof: Buffer | null = null
  private trexDefault = 0

  /** Feeds bytes; returns the fragments completed by them. Throws on a stream that is not MP4. */
  push(chunk: Buffer): Fragment[] {
    this.pending.push(chunk)
    this.pendingBytes += chunk.length
    let buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes)
    const out: Fragment[] = []
    let at = 0
    while (buf.length - at >= 8) {
      let size = buf.readUInt32BE(at)
      if (size === 1) {
        if (buf.length - at < 16) break
        size = Number(buf.readBigUInt64BE(at + 8))
      }
      if (size < 8 || size > MAX_BOX_BYTES) throw new Error(`not a fragmented MP4 stream (box of ${size} bytes)`)
      if (buf.length - at < size) break
      const box = buf.subarray(at, at + size)
      at += size
      this.onBox(box.toString('latin1', 4, 8), Buffer.from(box), out)
    }
    buf = buf.subarray(at)
    this.pending = buf.length > 0 ? [buf] : []
    this.pendingBytes = buf.length
    return out
  }

  private onBox(type: string, box: Buffer, out: Fragment[]): void {
    if (type === 'ftyp') this.head = [box]
    else if (type === 'moov') {
      this.init = Buffer.concat([...this.head, box])
      this.trexDefault = trexFlags(box)
    } else if (type === 'moof') this.moof = box
    else if (type === 'mdat' && this.moof) {
      const flags = firstSampleFlags(this.moof, this.trexDefault)
      out.push({ moof: this.moof, mdat: box, keyframe: flags !== null && (flags & NON_SYNC) === 0, decodeTime: decodeTimeOf(this.moof) })
      this.moof = null
    }
  }
}
