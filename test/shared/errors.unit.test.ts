import { describe, expect, it } from 'vitest'
import { ApiError, catalogue, RecommendedAction } from '../../shared/errors/index.ts'
import { failure, success } from '../../shared/envelope.ts'

describe('error catalogue (spec 7)', () => {
  it('holds every identifier of spec 7.1 with its key', () => {
    const keys = Object.fromEntries(Object.values(catalogue).map((e) => [e.msgCode, e.messageKey]))
    for (const key of ['api.error.ActionAlgLoadFailed', 'api.error.NotCreated', 'api.error.TaskCreateFailed', 'api.error.InvalidParam', 'api.error.ImageDecodeFailed', 'api.error.ImageDownloadFailed'])
      expect(Object.values(keys)).toContain(key)
    for (const code of ['IMAGE_INPUT_TOO_LARGE', 'IMAGE_RESOLUTION_TOO_LARGE', 'STORAGE_RESERVE_REACHED', 'TRANSFER_BUSY', 'UPLOAD_METADATA_BUDGET', 'HTTP_BODY_TOO_LARGE', 'DefaultCantBeExport'])
      expect(keys).toHaveProperty(code)
    expect(keys.IMAGE_INPUT_TOO_LARGE).toBe('api.error.imageInputTooLarge')
    expect(catalogue.IMAGE_INPUT_TOO_LARGE.recommendedAction).toBe('RESIZE_OR_RECOMPRESS_IMAGE')
    expect(catalogue.HTTP_BODY_TOO_LARGE.httpStatus).toBe(413)
    expect(catalogue.Unauthorized.httpStatus).toBe(401)
    expect(catalogue.RangeNotSatisfiable.httpStatus).toBe(416)
  })

  it('offers every recommended-action code of spec 7.2', () => {
    for (const code of ['FREE_DISK_SPACE', 'USE_CHUNKED_UPLOAD', 'REDUCE_REQUEST_BODY', 'USE_LARGER_CHUNKS', 'RETRY', 'RETRY_LATER', 'RESIZE_IMAGE', 'RESIZE_OR_RECOMPRESS_IMAGE', 'CHECK_UPLOAD_PARAMETERS', 'CHANGE_DEPLOYMENT_POLICY', 'USE_LARGER_CHUNKS_OR_CHANGE_POLICY'])
      expect(RecommendedAction).toHaveProperty(code, code)
  })

  it('has unique message keys and codes', () => {
    const entries = Object.values(catalogue)
    expect(new Set(entries.map((e) => e.messageKey)).size).toBe(entries.length)
    expect(new Set(entries.map((e) => e.msgCode)).size).toBe(entries.length)
  })

  it('builds a full message item with details and overrides (spec 2.7)', () => {
    const error = new ApiError('STORAGE_RESERVE_REACHED', { details: { requiredBytes: 10, availableBytes: 5, reserveBytes: 1 } })
    expect(error.item).toEqual({
      msgCode: 'STORAGE_RESERVE_REACHED',
      msgText: catalogue.STORAGE_RESERVE_REACHED.msgText,
      messageKey: 'api.error.storageReserveReached',
      details: { requiredBytes: 10, availableBytes: 5, reserveBytes: 1 },
      retryable: false,
      recommendedAction: 'FREE_DISK_SPACE',
    })
    const busy = new ApiError('TRANSFER_BUSY', { retryAfterSeconds: 3 })
    expect(busy.item).toMatchObject({ retryable: true, retryAfterSeconds: 3, recommendedAction: 'RETRY_LATER' })
  })

  it('wraps results and failures in the envelope of spec 2.1', () => {
    expect(success({ a: 1 })).toEqual({ resCode: 1, resMsg: [], resultCode: '0', resultMsg: 'success', resData: { a: 1 } })
    expect(success(undefined)).not.toHaveProperty('resData')
    const item = new ApiError('NotCreated').item
    expect(failure([item])).toEqual({ resCode: 0, resMsg: [item], resultCode: item.msgCode, resultMsg: item.msgText })
  })
})
