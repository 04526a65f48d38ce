import type { ApiRoute } from './api.ts'

/**
 * Names for the routes the client's methods call (spec 4). Each value is checked against the
 * handlers' own route list (api.generated.ts): a route that no handler serves does not compile.
 */
export const ROUTES = {
  // The console's Fleet view (docs/deployment.md "Fleet view")
  fleetList: '/gtw/cwai/Fleet/list',
  fleetCall: '/gtw/cwai/Fleet/call',
  fleetPush: '/gtw/cwai/Fleet/push',
  fleetPushStatus: '/gtw/cwai/Fleet/pushStatus',
  login: '/gtw/cwai/login/DoLogin',
  changePassword: '/gtw/cwai/login/ChangePassword',
  logout: '/gtw/cwai/login/Logout',
  algorithmPage: '/gtw/cwai/algorithm/page',
  // spec 4.10 (shapes in docs/algorithms.md "Algorithms and pipeline layouts")
  algorithmDelete: '/gtw/cwai/Algorithm/delete',
  algorithmUpload: '/gtw/cwai/Algorithm/upload',
  algorithmLayoutList: '/gtw/cwai/algorithm/layout/list',
  algorithmExport: '/gtw/cwai/algorithm/layout/exportSingleAlg',
  uploadCapabilities: '/gtw/cwai/atomic/model/uploadCapabilities',
  uploadTemp: '/gtw/cwai/atomic/model/uploadTemp',
  cancelUpload: '/gtw/cwai/atomic/model/cancelUpload',
  taskCreate: '/gtw/cwai/aihost/PTaskCreate',
  detectPic: '/gtw/cwai/aihost/PTaskDetectPic',
  // spec 4.8: the spelling of the path is as written.
  taskCancel: '/gtw/cwai/aihost/PTaskCancle',
  taskList: '/v1/cwai/aihost/QueryTaskList',
  taskInfo: '/v1/cwai/aihost/QueryTaskInfo',
  queryLogs: '/v1/cwai/aihost/QueryLogs',
  metrics: '/gtw/cwai/System/Metrics',
  deviceStatus: '/gtw/cwai/System/QueryDeviceStatus',
  // spec 4.11 software upgrade (docs/system.md "Software upgrade")
  upgrade: '/gtw/cwai/System/Upgrade',
  upgradeStatus: '/gtw/cwai/System/UpgradeStatus',
  memoryStatus: '/v1/cwai/aihost/QueryDeviceMemStatus',
  modelList: '/gtw/cwai/atomic/Model/list',
  modelUpload: '/gtw/cwai/atomic/Model/upload',
  modelDelete: '/gtw/cwai/atomic/Model/delete',
  modelExport: '/gtw/cwai/atomic/model/exportConfig',
  viewRoutes: '/v1/cwai/aihost/ViewRoutes',
  probe: '/v1/cwai/aihost/Probe',
  interfaceDocUrl: '/gtw/cwai/System/QueryInterfaceDocUrl',
  // spec 4.10 Camera, 4.9 stream tasks, 4.10 Task (docs/cameras-and-stream-tasks.md "Cameras", "Stream tasks")
  cameraAdd: '/gtw/cwai/Camera/add',
  cameraPage: '/gtw/cwai/Camera/page',
  cameraUpdate: '/gtw/cwai/Camera/update',
  cameraDelete: '/gtw/cwai/Camera/delete',
  cameraCapture: '/gtw/cwai/Camera/capture',
  cameraUsbList: '/gtw/cwai/Camera/usbList',
  streamTaskCreate: '/v1/cwai/aihost/TaskCreate',
  streamTaskCancel: '/v1/cwai/aihost/TaskCancle',
  streamTaskPage: '/gtw/cwai/Task/page',
  streamTaskDetail: '/gtw/cwai/Task/detail',
  streamTaskSwitch: '/gtw/cwai/Task/switch',
  streamTaskUpdate: '/gtw/cwai/Task/update',
  streamTaskBatch: '/gtw/cwai/Task/batch',
  eventPage: '/gtw/cwai/Event/EventPage',
  // spec 4.10 File import (gallery routes: client/galleries.ts, from the kind catalogue)
  importFiles: '/gtw/cwai/File/ImportFiles',
  importStatus: '/gtw/cwai/File/ImportStatus',
} as const satisfies Record<string, ApiRoute>
