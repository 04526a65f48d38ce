import { ApiError } from '../../shared/errors/index.ts'
import { catalogue, type ErrorId } from '../../shared/errors/catalogue.ts'

/** A source failure: the catalogue's text and, in details.reason, what failed (credentials removed). */
export const failure = (id: ErrorId, reason: string) => new ApiError(id, { details: { reason }, msgText: `${catalogue[id].msgText} (${reason})` })
