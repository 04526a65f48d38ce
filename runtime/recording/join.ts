import { execFile } from 'node:child_process'
import { rename, rm, stat, writeFile } from 'node:fs/promises'

/**
 * Joins segments into one mp4 without re-encoding: ffmpeg's concat demuxer, `-c copy`, the
 * index at the front (`+faststart`) so a player starts before it has the whole file. Written
 * to `<target>.part` and renamed, so a clip file exists only complete. Returns its size.
 */
export async function joinSegments(binary: string, files: string[], target: string, timeoutMs = 120_000): Promise<number> {
  const list = `${target}.txt`
  const part = `${target}.part`
  // The concat list quotes paths with single quotes; ours are made here, never from input.
  await writeFile(list, files.map((file) => `file '${file.replaceAll("'", "'\\''")}'\n`).join(''))
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(binary, [
        '-hide_banner', '-nostdin', '-loglevel', 'error', '-f', 'concat', '-safe', '0', '-i', list,
        '-map', '0:v:0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', '-y', part,
      ], { timeout: timeoutMs }, (error, _stdout, stderr) => (error ? reject(new Error(`joining ${files.length} segments failed: ${stderr.trim().split('\n').at(-1) ?? error.message}`)) : resolve()))
    })
    await rename(part, target)
    return (await stat(target)).size
  } catch (error) {
    await rm(part, { force: true })
    throw error
  } finally {
    await rm(list, { force: true })
  }
}
