import { describe, expect, it } from 'vitest'
import { DeviceError, NetworkError } from '../../runtime/client/errors.ts'
import { ACTION_TEXT, MESSAGE_TEXT, showError } from '../../runtime/console/messages.ts'
import { catalogue } from '../../shared/errors/catalogue.ts'
import { RecommendedAction } from '../../shared/errors/actions.ts'

describe('console error display (spec 7.2)', () => {
  it('shows the messageKey text, actual value, limit, action and wait of a device error', () => {
    const error = new DeviceError('/gtw/cwai/atomic/model/uploadTemp', 200, [{
      msgCode: 'IMAGE_INPUT_TOO_LARGE', messageKey: 'api.error.imageInputTooLarge', msgText: 'device text',
      details: { actualBytes: 3145728, limitBytes: 2097152, resource: 'encoded-image', purpose: 'image' },
      retryable: false, retryAfterSeconds: 7, recommendedAction: 'RESIZE_OR_RECOMPRESS_IMAGE',
    }])
    const shown = showError(error)
    expect(shown.title).toBe('The image file is larger than the device accepts.')
    expect(shown.facts).toEqual([
      ['Actual size', '3.00 MB (3145728 bytes)'],
      ['Limit', '2.00 MB (2097152 bytes)'],
      ['Resource', 'encoded-image'],
      ['Purpose', 'image'],
    ])
    expect(shown.action).toBe('RESIZE_OR_RECOMPRESS_IMAGE')
    expect(shown.actionText).toBe(ACTION_TEXT.RESIZE_OR_RECOMPRESS_IMAGE)
    expect(shown.retryAfterSeconds).toBe(7)
  })

  it('shows the details of algorithm management errors (spec 4.10): tasks in use, package entry, limits', () => {
    const inUse = showError(new DeviceError('/gtw/cwai/Algorithm/delete', 200, [{
      msgCode: '7303', messageKey: 'api.error.AlgorithmInUse', msgText: 'device text',
      details: { algorithmId: 'site-helmets', taskIds: ['t-1', 't-2'] }, retryable: false, recommendedAction: 'NONE',
    }]))
    expect(inUse.title).toBe(MESSAGE_TEXT['api.error.AlgorithmInUse'])
    expect(inUse.facts).toEqual([['Algorithm', 'site-helmets'], ['Tasks using it', 't-1, t-2']])
    const tooLarge = showError(new DeviceError('/gtw/cwai/Algorithm/upload', 200, [{
      msgCode: '7307', messageKey: 'api.error.AlgorithmPackageTooLarge', msgText: 'device text',
      details: { limitBytes: '1048576', atLeastBytes: '1048577' }, retryable: false, recommendedAction: 'CHECK_UPLOAD_PARAMETERS',
    }]))
    expect(tooLarge.facts).toEqual([['Limit', '1.00 MB (1048576 bytes)'], ['Expanded size (at least)', '1.00 MB (1048577 bytes)']])
    const unsafe = showError(new DeviceError('/gtw/cwai/Algorithm/upload', 200, [{
      msgCode: '7306', messageKey: 'api.error.AlgorithmPackageUnsafe', msgText: 'device text',
      details: { entry: '../escape.onnx', reason: 'absolute or climbing path' }, retryable: false, recommendedAction: 'CHECK_UPLOAD_PARAMETERS',
    }]))
    expect(unsafe.facts).toEqual([['Reason', 'absolute or climbing path'], ['Package entry', '../escape.onnx']])
  })

  it('shows every details field, formatted, and the image dimensions of a resolution refusal', () => {
    const shown = showError(new DeviceError('/gtw/cwai/aihost/PTaskDetectPic', 200, [{
      msgCode: 'IMAGE_RESOLUTION_TOO_LARGE', messageKey: 'api.error.imageResolutionTooLarge', msgText: 'device text',
      details: { width: 8000, height: 6000, actualPixels: 48000000, limitPixels: 40000000, resource: 'decode-memory', budgetBytes: 268435456, queuedRequests: 3, shared: true, since: '1767225600000', nested: { retryCount: 2 } },
      retryable: false, recommendedAction: 'RESIZE_IMAGE',
    }]))
    expect(shown.facts).toEqual([
      ['Actual pixels', '48,000,000 pixels'],
      ['Pixel limit', '40,000,000 pixels'],
      ['Resource', 'decode-memory'],
      ['Image dimensions', '8,000 × 6,000 pixels'],
      ['Budget bytes', '256.0 MB (268435456 bytes)'],
      ['Queued requests', '3'],
      ['Shared', 'yes'],
      ['Since', new Date(1767225600000).toLocaleString()],
      ['Nested', 'Retry count: 2'],
    ])
    expect(shown.next).toBeNull()
  })

  it('offers the next step: the model upload for a pipeline missing its model, the tasks page for an algorithm in use', () => {
    const missing = showError(new DeviceError('/v1/cwai/aihost/PTaskCreate', 200, [{
      msgCode: '1005', messageKey: 'api.error.TaskCreateFailed', msgText: 'device text',
      details: { algorithmCode: 'no-safety-helmet-analysis', missingModel: 'helmet-classifier' }, retryable: false, recommendedAction: 'CHECK_MODEL_STATUS',
    }]))
    expect(missing.facts).toEqual([['Algorithm', 'no-safety-helmet-analysis'], ['Missing model', 'helmet-classifier']])
    expect(missing.next).toEqual({ kind: 'upload-model', modelId: 'helmet-classifier' })
    const inUse = showError(new DeviceError('/gtw/cwai/Algorithm/delete', 200, [{
      msgCode: '7303', messageKey: 'api.error.AlgorithmInUse', msgText: 'device text',
      details: { algorithmId: 'face-detection', taskIds: ['t-1'] }, retryable: false, recommendedAction: 'NONE',
    }]))
    expect(inUse.next).toEqual({ kind: 'cancel-tasks', algorithmId: 'face-detection', taskIds: ['t-1'] })
  })

  it('names the tasks that keep a camera from being deleted, and leads to them (spec 4.10 Camera)', () => {
    const inUse = showError(new DeviceError('/gtw/cwai/Camera/delete', 200, [{
      msgCode: '7408', messageKey: 'api.error.CameraInUse', msgText: 'device text',
      details: { cameraId: 'cam-1', taskIds: ['door-people', 'door-cars'] }, retryable: false, recommendedAction: 'NONE',
    }]))
    expect(inUse.title).toBe(MESSAGE_TEXT['api.error.CameraInUse'])
    expect(inUse.facts).toEqual([['Camera', 'cam-1'], ['Tasks using it', 'door-people, door-cars']])
    expect(inUse.next).toEqual({ kind: 'camera-tasks', cameraId: 'cam-1', taskIds: ['door-people', 'door-cars'] })
  })

  it('falls back to the device text for a key it does not know', () => {
    const shown = showError(new DeviceError('/x', 200, [{ msgCode: '9', messageKey: 'api.error.SomethingNew', msgText: 'Something new happened.', details: {}, retryable: true, recommendedAction: 'RETRY' }]))
    expect(shown.title).toBe('Something new happened.')
    expect(shown.actionText).toBe('Try again.')
  })

  it('explains a bare 413 by request type: chunks for multipart uploads, a smaller body otherwise (spec 7.1)', () => {
    const upload = showError(new DeviceError('/gtw/cwai/atomic/model/uploadTemp', 413, [], '<html>413 Request Entity Too Large</html>'))
    expect(upload.action).toBe('USE_CHUNKED_UPLOAD')
    expect(upload.title).toBe('The upload request was too large for the device (HTTP 413).')
    const json = showError(new DeviceError('/gtw/cwai/aihost/PTaskDetectPic', 413, [], ''))
    expect(json.action).toBe('REDUCE_REQUEST_BODY')
    expect(json.title).toBe('The request body was too large for the device (HTTP 413).')
  })

  it('tells a network failure apart from a device answer', () => {
    const shown = showError(new NetworkError('/gtw/cwai/algorithm/page', new TypeError('Failed to fetch')))
    expect(shown.title).toBe('The device cannot be reached (connection lost or refused).')
    expect(shown.httpStatus).toBeNull()
  })

  it('names only messageKeys of the device catalogue, and has a text for every action code', () => {
    for (const action of Object.values(RecommendedAction)) expect(ACTION_TEXT, action).toHaveProperty(action)
    const keys = Object.values(catalogue).map((e) => e.messageKey)
    for (const key of Object.keys(MESSAGE_TEXT)) expect(keys, key).toContain(key)
  })
})

describe('specific advice from the error\'s details', () => {
  const item = (messageKey: string, recommendedAction: string, details: Record<string, unknown>) =>
    new DeviceError('/r', 200, [{ msgCode: 'X', messageKey, msgText: 't', details, retryable: false, recommendedAction }])
  it('a gallery photo with three faces: one face, or add from a detection; the boxes in words', () => {
    const shown = showError(item('api.error.GalleryFaceCount', catalogue.GalleryFaceCount.recommendedAction,
      { faces: 3, boxes: [{ x: 1, y: 2, width: 30, height: 40 }, { x: 50, y: 2, width: 31, height: 41 }, { x: 90, y: 5, width: 28, height: 39 }] }))
    expect(shown.actionText).toBe('The photo shows 3 faces: use a photo with one face, or add from a detection (Detection page: “Add to gallery” on the face you mean).')
    expect(shown.facts).toContainEqual(['Found', 'at 1, 2 (30 × 40 px); at 50, 2 (31 × 41 px); at 90, 5 (28 × 39 px)'])
    expect(showError(item('api.error.GalleryFaceCount', 'USE_ONE_SUBJECT_PHOTO', { faces: 0, boxes: [] })).actionText)
      .toBe('No face was found: use a photo where one face is clearly visible, or add from a detection (Detection page: “Add to gallery”).')
  })
  it('a task rate above the camera\'s: the camera\'s rate named', () => {
    const shown = showError(item('api.error.InvalidParam', 'LOWER_TARGET_FPS', { field: 'targetFps', targetFps: 50, sourceFps: 10 }))
    expect(shown.actionText).toBe('The camera sends 10 frames per second: choose at most 10 (analysing fewer, e.g. 5, saves processing).')
  })
})
