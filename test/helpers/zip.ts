import yauzl from 'yauzl'
import yazl from 'yazl'

/** A zip of the given files (name → content), as yazl writes it. */
export async function zipOf(files: Record<string, Buffer | string>): Promise<Buffer> {
  const zip = new yazl.ZipFile()
  for (const [name, data] of Object.entries(files)) zip.addBuffer(Buffer.from(data), name)
  zip.end()
  const chunks: Buffer[] = []
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** Entries of a zip archive: name → bytes. */
export async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true })
  const out = new Map<string, Buffer>()
  for await (const entry of zip.eachEntry()) {
    const chunks: Buffer[] = []
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer)
    out.set(entry.fileName, Buffer.concat(chunks))
  }
  return out
}
