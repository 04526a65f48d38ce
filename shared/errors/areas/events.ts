import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Events: the MQTT request transport (spec 5.6) and the fleet pushes over it (docs/deployment.md "Fleet view"). Part of the error catalogue (shared/errors/catalogue.ts). */
export const EVENT_ERRORS = {
  MqttNotRegistered: entry('3001', 'api.error.MqttNotRegistered',
    'The device has not completed its MQTT connection and registration; the request was not run.', A.RETRY_LATER, { retryable: true, retryAfterSeconds: 1 }),
  MqttBusy: entry('3002', 'api.error.MqttBusy',
    'As many MQTT requests as allowed (details.limit) are running; the request was not run.', A.RETRY_LATER, { httpStatus: 429, retryable: true, retryAfterSeconds: 1 }),
  // docs/deployment.md "Fleet view": packages pushed to several devices from the console.
  FleetPushNotFound: entry('3011', 'api.error.FleetPushNotFound',
    'No push with this pushId is kept on this device (it restarted, or newer pushes replaced it).', A.CHECK_REQUEST_PARAMETERS, { httpStatus: 404 }),
  FleetPushBusy: entry('3012', 'api.error.FleetPushBusy',
    'As many pushes as allowed (details.limit) are running on this device; wait for one to finish.', A.RETRY_LATER, { httpStatus: 429, retryable: true, retryAfterSeconds: 10 }),
} satisfies Record<string, CatalogueEntry>
