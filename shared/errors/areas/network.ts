import { RecommendedAction as A } from '../actions.ts'
import { entry, type CatalogueEntry } from '../entry.ts'

/** Network changes (spec 4.10 Network). Part of the error catalogue (shared/errors/catalogue.ts). */
export const NETWORK_ERRORS = {
  NetworkBackendUnavailable: entry('8001', 'api.error.NetworkBackendUnavailable',
    'No supported network configuration backend (NetworkManager, systemd-networkd, ifupdown) was found on this host; the network cannot be changed from the device.', A.CHANGE_DEPLOYMENT_POLICY),
  NetworkChangeNotPermitted: entry('8002', 'api.error.NetworkChangeNotPermitted',
    'The device process may not change the network configuration (it needs root or CAP_NET_ADMIN and write access to the backend\'s files); nothing was changed.', A.CHANGE_DEPLOYMENT_POLICY),
  NetworkChangePending: entry('8003', 'api.error.NetworkChangePending',
    'Another network change waits for its confirmation: confirm or revert it, or wait for its rollback.', A.RETRY_LATER, { retryable: true }),
  NetworkChangeNotFound: entry('8004', 'api.error.NetworkChangeNotFound',
    'No network change with this id waits for confirmation (it was confirmed or rolled back, or never made).', A.CHECK_REQUEST_PARAMETERS),
  NetworkChangeFailed: entry('8005', 'api.error.NetworkChangeFailed',
    'The backend could not apply the network change; the previous configuration was restored.', A.CHECK_REQUEST_PARAMETERS),
  NetworkConfirmFromOldAddress: entry('8006', 'api.error.NetworkConfirmFromOldAddress',
    'The confirmation reached the device through an address the change gives up; reaching the new address is the proof that the change works, so open the device at its new address (details.confirmAt) and confirm there. The change stays pending.', A.CONFIRM_AT_NEW_ADDRESS),
} satisfies Record<string, CatalogueEntry>
