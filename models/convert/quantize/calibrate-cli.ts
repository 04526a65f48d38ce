/**
 * Writes `models/convert/calibration/<file>.json`: the activation ranges the int8 variant of
 * a converted model is quantized with (qdq.ts). A development step, run when a model, its
 * input size or the quantized op set changes (the build reads the committed file; nothing is
 * calibrated at build or run time):
 *
 *   npx tsx models/convert/quantize/calibrate-cli.ts centernet [centernet-320 …]
 *
 * Inputs (letterboxed to the model's square input, RGB 0..255 NHWC, as the detector
 * manifests feed CenterNet): one frame every 10 s of each video in MEDIA_DIR (default
 * ../shared/media, extracted with ffmpeg), the photos of MEDIA_DIR/faces, and the sample
 * photos of @vladmandic/face-api (demo/sample1..6.jpg).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import onnxProto from 'onnx-proto'
import sharp from 'sharp'
import { buildModels } from '../build-models.ts'
import { modelSources } from '../sources.ts'
import { calibrate, type CalibrationInput } from './calibrate.ts'

const root = path.resolve(import.meta.dirname, '../../..')
const mediaDir = process.env.MEDIA_DIR ?? path.resolve(root, '../shared/media')

async function letterbox(bytes: Buffer, size: number): Promise<CalibrationInput> {
  const { data, info } = await sharp(bytes).autoOrient().removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const s = Math.min(size / info.width, size / info.height)
  const w = Math.max(1, Math.round(info.width * s)), h = Math.max(1, Math.round(info.height * s))
  const px = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).resize(w, h, { fit: 'fill', kernel: 'linear' }).raw().toBuffer()
  const tensor = new Float32Array(size * size * 3)
  for (let y = 0; y < h; y++) for (let x = 0; x < w * 3; x++) tensor[y * size * 3 + x] = px[y * w * 3 + x]!
  return { data: tensor, dims: [1, size, size, 3] }
}

function calibrationImages(): Buffer[] {
  const frames = mkdtempSync(path.join(tmpdir(), 'calibration-'))
  try {
    const images: Buffer[] = []
    for (const video of readdirSync(mediaDir).filter((f) => f.endsWith('.mp4')).sort()) {
      const out = path.join(frames, video)
      execFileSync('mkdir', ['-p', out])
      execFileSync('ffmpeg', ['-loglevel', 'error', '-i', path.join(mediaDir, video), '-vf', 'fps=1/10', '-q:v', '2', path.join(out, 'f%03d.jpg')])
      for (const f of readdirSync(out).sort()) images.push(readFileSync(path.join(out, f)))
    }
    const faces = path.join(mediaDir, 'faces')
    for (const f of readdirSync(faces).filter((f) => f.endsWith('.jpg')).sort()) images.push(readFileSync(path.join(faces, f)))
    const demo = path.join(root, 'node_modules/@vladmandic/face-api/demo')
    for (let n = 1; n <= 6; n++) images.push(readFileSync(path.join(demo, `sample${n}.jpg`)))
    return images
  } finally {
    rmSync(frames, { recursive: true, force: true })
  }
}

const files = process.argv.slice(2)
if (!files.length) throw new Error('usage: calibrate-cli.ts <model file name, e.g. centernet-320> …')
const out = mkdtempSync(path.join(tmpdir(), 'calibrate-models-'))
try {
  const images = calibrationImages()
  for (const file of files) {
    const source = modelSources.find((s) => file === s.name || file.startsWith(`${s.name}-`))
    if (!source?.int8) throw new Error(`calibrate: ${file} is not a model with an int8 variant (sources.ts)`)
    // Only the float models are needed: converted without their int8 variants.
    await buildModels([{ ...source, int8: false }], out, root)
    const bytes = readFileSync(path.join(out, `${file}.onnx`))
    const input = onnxProto.onnx.ModelProto.decode(bytes).graph!.input![0]!
    const size = Number(input.type!.tensorType!.shape!.dim![1]!.dimValue)
    const inputs = await Promise.all(images.map((b) => letterbox(b, size)))
    const started = Date.now()
    const ranges = await calibrate(bytes, inputs)
    writeFileSync(path.join(root, 'models/convert/calibration', `${file}.json`), `${JSON.stringify(ranges, null, 1)}\n`)
    console.log(`calibrate: ${file}: ${Object.keys(ranges).length} tensors over ${inputs.length} images in ${Date.now() - started} ms`)
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
