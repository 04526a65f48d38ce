import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** System settings (spec 4.10 System; docs/system.md "System settings") and log files. Part of the error catalogue (shared/errors/catalogue.ts). */
export const SYSTEM_ERRORS = {
  TimeZoneUnknown: entry('8111', 'api.error.TimeZoneUnknown',
    'The time zone is not an IANA time zone name (for example Europe/Berlin) this device knows.', A.CHECK_REQUEST_PARAMETERS),
  TimeServiceUnavailable: entry('8112', 'api.error.TimeServiceUnavailable',
    'No supported time service (systemd-timesyncd, chrony) runs on this host, so NTP servers cannot be set from the device; nothing was changed.', A.CHANGE_DEPLOYMENT_POLICY),
  TimeChangeNotPermitted: entry('8113', 'api.error.TimeChangeNotPermitted',
    'The device process may not write the time service\'s configuration or restart it (it needs root); nothing was changed.', A.CHANGE_DEPLOYMENT_POLICY),
  TimeServiceFailed: entry('8114', 'api.error.TimeServiceFailed',
    'The time service did not take the new NTP servers; its previous configuration was restored: see details.reason.', A.CHECK_REQUEST_PARAMETERS),
  LogoInvalid: entry('8121', 'api.error.LogoInvalid',
    'The logo is not a PNG, JPEG or SVG image the device accepts (readable, within the size limits): see details.reason.', A.CHECK_UPLOAD_PARAMETERS),
  LogFileNotFound: entry('8131', 'api.error.LogFileNotFound',
    'No log file with this name exists (QueryLogFiles lists them; rotation removes the oldest).', A.CHECK_REQUEST_PARAMETERS, { httpStatus: 404 }),
} satisfies Record<string, CatalogueEntry>
