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
