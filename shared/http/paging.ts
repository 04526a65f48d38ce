import { Type } from '@sinclair/typebox'

/**
 * Paging fields of the list routes (spec 2.3: pageNum from 1, pageSize). Both are bounded so
 * that an offset `(page - 1) × size` stays a small safe integer: a huge page number is the
 * client's mistake (InvalidParam), never an internal error.
 */
const MAX_PAGE_NUMBER = 1_000_000

/** `pageNum` (or `pageNo`, as spec 4.9 names it) from 1. */
export const PageNumber = () => Type.Integer({ minimum: 1, maximum: MAX_PAGE_NUMBER, default: 1 })

/** `pageSize`: each route picks its default and how many of its rows one answer may carry. */
export const PageSize = (defaultSize: number, maxSize: number) => Type.Integer({ minimum: 1, maximum: maxSize, default: defaultSize })
