import { describe, expect, it } from 'vitest'
import { parseCapacityArgs } from '../../bench/capacity/args.ts'
import { DEFAULT_ALGORITHM_BY_TASK } from '../../bench/capacity/algorithms.ts'
import { DEFAULT_GATES, DEFAULT_RUN } from '../../bench/capacity/defaults.ts'

// Flags of `npm run bench:capacity` (spec 2.8).
describe('parseCapacityArgs', () => {
  it('takes workload and target fps and fills the defaults', () => {
    expect(parseCapacityArgs(['--workload', 'person-detector', '--target-fps', '5'])).toEqual({
      workload: 'person-detector', targetFps: 5, minChannels: 1, maxChannels: DEFAULT_RUN.maxChannels, holdSeconds: DEFAULT_RUN.holdSeconds,
      warmupSeconds: DEFAULT_RUN.warmupSeconds, scope: 'additional-experimental-platform', stepMode: 'double', motionGating: true, detectorInputSize: null,
      video: DEFAULT_RUN.video, helmetClassifier: null, outDir: DEFAULT_RUN.outDir, algorithms: DEFAULT_ALGORITHM_BY_TASK, gates: DEFAULT_GATES,
    })
    expect(DEFAULT_RUN.video).toMatch(/\/shared\/media\/one-by-one-person-detection\.mp4$/)
  })

  it('reads every optional flag, gates included', () => {
    const a = parseCapacityArgs(['--workload', 'concurrent-mixed', '--target-fps', '2.5', '--min-channels', '2', '--max-channels', '3', '--hold-seconds', '4',
      '--warmup-seconds', '0', '--scope', 'release-platform', '--step', 'increment', '--motion-gating', 'off', '--detector-input-size', '320', '--video', '/tmp/v.mp4',
      '--helmet-classifier', '/tmp/h.onnx', '--out', '/tmp/x', '--min-fps-ratio', '0.9', '--max-detector-latency-ms', '250', '--algorithm', 'person-detector=people-v2'])
    expect(a).toMatchObject({ workload: 'concurrent-mixed', targetFps: 2.5, minChannels: 2, maxChannels: 3, holdSeconds: 4, warmupSeconds: 0, scope: 'release-platform',
      stepMode: 'increment', motionGating: false, detectorInputSize: 320, video: '/tmp/v.mp4', helmetClassifier: '/tmp/h.onnx', outDir: '/tmp/x' })
    expect(a.gates).toEqual({ ...DEFAULT_GATES, minFpsRatio: 0.9, maxDetectorLatencyMs: 250 })
    expect(a.algorithms).toEqual({ ...DEFAULT_ALGORITHM_BY_TASK, 'person-detector': 'people-v2' })
  })

  it.each([
    [['--target-fps', '5'], /--workload must be one of/],
    [['--workload', 'person-detector'], /--target-fps is required/],
    [['--workload', 'person-detector', '--target-fps', '0'], /--target-fps must be a number > 0/],
    [['--workload', 'person-detector', '--target-fps', '5', '--max-channels', '1.5'], /--max-channels must be an integer >= 1/],
    [['--workload', 'person-detector', '--target-fps', '5', '--hold-seconds', 'abc'], /--hold-seconds must be a number > 0/],
    [['--workload', 'person-detector', '--target-fps', '5', '--scope', 'lab'], /--scope must be one of/],
    [['--workload', 'person-detector', '--target-fps', '5', '--step', 'triple'], /--step must be double or increment/],
    [['--workload', 'person-detector', '--target-fps', '5', '--max-channels', '2', '--min-channels', '3'], /--min-channels must be an integer in 1\.\.2/],
    [['--workload', 'person-detector', '--target-fps', '5', '--warmup-seconds=-1'], /--warmup-seconds must be a number >= 0/],
    [['--workload', 'person-detector', '--target-fps', '5', '--motion-gating', 'yes'], /--motion-gating must be on or off/],
    [['--workload', 'person-detector', '--target-fps', '5', '--max-missing-rate=-1'], /--max-missing-rate must be a number >= 0/],
    [['--workload', 'person-detector', '--target-fps', '5', '--detector-input-size', '320.5'], /--detector-input-size must be an integer >= 1/],
    [['--workload', 'person-detector', '--target-fps', '5', '--channels', '2'], /Unknown option '--channels'/],
    [['--workload', 'person-detector', '--target-fps', '5', '--algorithm', 'helmet=x'], /--algorithm must be TASK=ID/],
    [['--workload', 'person-detector', '--target-fps', '5', '--algorithm', 'person-detector'], /--algorithm must be TASK=ID/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCapacityArgs(argv)).toThrow(message)
  })
})

describe('setupBlockOf', () => {
  it('maps the answered pipeline-binding and storage errors to their boundary kinds, and nothing else', async () => {
    const { setupBlockOf } = await import('../../bench/capacity/setup-errors.ts')
    const { ApiError } = await import('../../shared/errors/index.ts')
    expect(setupBlockOf(new ApiError('ActionAlgLoadFailed').item, 'person-detector on 4 channels')).toEqual({
      boundaryKind: 'binding-blocked', reason: 'person-detector on 4 channels: api.error.ActionAlgLoadFailed — The algorithm does not exist or its resources are unavailable.',
    })
    expect(setupBlockOf(new ApiError('TaskCreateFailed').item, 'x')?.boundaryKind).toBe('binding-blocked')
    expect(setupBlockOf(new ApiError('STORAGE_RESERVE_REACHED').item, 'x')?.boundaryKind).toBe('storage-blocked')
    expect(setupBlockOf(new ApiError('InvalidParam').item, 'x')).toBeNull()
  })
})
