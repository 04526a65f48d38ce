import type { SourceType } from '../../../shared/cameras/types.ts'
import { file } from './file.ts'
import { http, httpKinds } from './http.ts'
import { rtsp } from './rtsp.ts'
import type { CameraSource, FfmpegInput } from './types.ts'
import { usb } from './usb.ts'

/** The camera sources by `sourceType` (spec 4.10 Camera): one file per source in this folder. */
export const cameraSources: Record<SourceType, CameraSource> = { rtsp, http, file, usb }

/** The ffmpeg inputs by name (`InputSpec.sourceType`): each source's and each HTTP kind's own. */
const ffmpegInputs = new Map<string, FfmpegInput>(
  [...Object.entries(cameraSources), ...Object.entries(httpKinds)].flatMap(([name, plugin]) => plugin.input ? [[name, plugin.input] as const] : []),
)

export function ffmpegInput(name: string): FfmpegInput {
  const input = ffmpegInputs.get(name)
  if (!input) throw new Error(`no ffmpeg input named ${name} (runtime/cameras/sources/index.ts)`)
  return input
}
