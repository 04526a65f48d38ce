import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** spec 5: authentication. Part of the error catalogue (shared/errors/catalogue.ts). */
export const AUTH_ERRORS = {
  Unauthorized: entry('401', 'api.error.Unauthorized',
    'The mtk header is missing, unknown or expired.', A.SIGN_IN_AGAIN, { httpStatus: 401 }),
  LoginFailed: entry('2001', 'api.error.LoginFailed',
    'Account or password is wrong.', A.CHECK_REQUEST_PARAMETERS),
  LoginLocked: entry('2002', 'api.error.LoginLocked',
    'Too many failed sign-ins for this account from this address; try again later.', A.RETRY_LATER, { retryable: true }),
  PasswordChangeRequired: entry('2003', 'api.error.PasswordChangeRequired',
    'The password must be changed before business use.', A.CHANGE_PASSWORD, { httpStatus: 403 }),
  PasswordWeak: entry('2004', 'api.error.PasswordWeak',
    'The new password is not accepted by the device password policy.', A.CHECK_REQUEST_PARAMETERS),
  LoginBusy: entry('2005', 'api.error.LoginBusy',
    'Too many passwords are being checked at once; try again shortly.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 1 }),
} satisfies Record<string, CatalogueEntry>
