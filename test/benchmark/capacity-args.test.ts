import { describe, expect, it } from 'vitest'
import { parseCapacityArgs } from '../../bench/capacity/args.ts'
import { DEFAULT_ALGORITHM_BY_TASK } from '../../bench/capacity/algorithms.ts'
import { DEFAULT_GATES, DEFAULT_RUN } from '../../bench/capacity/defaults.ts'

// Flags of `npm run bench:capacity` (spec 2.8).
describe('parseCapacityArgs', () => {
  it('takes workload and target fps and fills the defaults', () => {
    expect(parseCapacityArgs(['--workload', 'person-detector', '--target-fps', '5'])).toEqual({
      workload: 'person-detector', targetFps: 5, maxChannels: DEFAULT_RUN.maxChannels, holdSeconds: DEFAULT_RUN.holdSeconds,
      scope: 'additional-experimental-platform', stepMode: 'double', queueDepth: DEFAULT_RUN.queueDepth,
      outDir: DEFAULT_RUN.outDir, frameDir: null, algorithms: DEFAULT_ALGORITHM_BY_TASK, gates: DEFAULT_GATES,
    })
  })

  it('reads every optional flag, gates included', () => {
    const a = parseCapacityArgs(['--workload', 'concurrent-mixed', '--target-fps', '2.5', '--max-channels', '3', '--hold-seconds', '4',
      '--scope', 'release-platform', '--step', 'increment', '--queue-depth', '0', '--out', '/tmp/x', '--frames', '/tmp/f',
      '--min-fps-ratio', '0.9', '--max-detector-latency-ms', '250', '--algorithm', 'person-detector=people-v2'])
    expect(a).toMatchObject({ workload: 'concurrent-mixed', targetFps: 2.5, maxChannels: 3, holdSeconds: 4, scope: 'release-platform',
      stepMode: 'increment', queueDepth: 0, outDir: '/tmp/x', frameDir: '/tmp/f' })
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
    [['--workload', 'person-detector', '--target-fps', '5', '--max-missing-rate=-1'], /--max-missing-rate must be a number >= 0/],
    [['--workload', 'person-detector', '--target-fps', '5', '--channels', '2'], /Unknown option '--channels'/],
    [['--workload', 'person-detector', '--target-fps', '5', '--algorithm', 'helmet=x'], /--algorithm must be TASK=ID/],
    [['--workload', 'person-detector', '--target-fps', '5', '--algorithm', 'person-detector'], /--algorithm must be TASK=ID/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCapacityArgs(argv)).toThrow(message)
  })
})

describe('setupBlockOf', () => {
  it('maps pipeline-binding and storage errors to their boundary kinds, and nothing else', async () => {
    const { setupBlockOf } = await import('../../bench/capacity/setup-errors.ts')
    const { ApiError } = await import('../../shared/errors/index.ts')
    expect(setupBlockOf(new ApiError('ActionAlgLoadFailed'), 'person-detector on 4 channels')).toMatchObject({
      boundaryKind: 'binding-blocked', reason: expect.stringContaining('api.error.ActionAlgLoadFailed'),
    })
    expect(setupBlockOf(new ApiError('TaskCreateFailed'), 'x')?.boundaryKind).toBe('binding-blocked')
    expect(setupBlockOf(new ApiError('STORAGE_RESERVE_REACHED'), 'x')?.boundaryKind).toBe('storage-blocked')
    expect(setupBlockOf(new ApiError('InvalidParam'), 'x')).toBeNull()
    expect(setupBlockOf(new Error('socket closed'), 'x')).toBeNull()
  })
})
