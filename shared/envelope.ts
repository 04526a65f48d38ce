import type { MessageItem } from './errors/index.ts'

/** The response envelope of spec 2.1. */
export interface Envelope<T = unknown> {
  resCode: 0 | 1
  resMsg: MessageItem[]
  resultCode: string
  resultMsg: string
  resData?: T
}

// Carrier-compatible codes (spec 2.1): "0" for success, the first message's code otherwise.
export const success = <T>(resData: T): Envelope<T> => ({
  resCode: 1,
  resMsg: [],
  resultCode: '0',
  resultMsg: 'success',
  ...(resData === undefined ? {} : { resData }),
})

export const failure = (items: MessageItem[]): Envelope<never> => ({
  resCode: 0,
  resMsg: items,
  resultCode: items[0]?.msgCode ?? '500',
  resultMsg: items[0]?.msgText ?? 'failure',
})
