import { describe, expect, it } from 'vitest'
import { DeviceError, NetworkError } from '../../shared/client/errors.ts'
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
