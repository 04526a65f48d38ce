export { RecommendedAction } from './actions.ts'
export { catalogue, type ErrorId, type CatalogueEntry } from './catalogue.ts'
export { ApiError, isApiError, invalidParam, type MessageItem, type ApiErrorOptions } from './api-error.ts'
export { internalError } from './internal.ts'
