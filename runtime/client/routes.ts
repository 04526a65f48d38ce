/** The routes the client calls (spec 4). */
export const ROUTES = {
  login: '/gtw/cwai/login/DoLogin',
  changePassword: '/gtw/cwai/login/ChangePassword',
  logout: '/gtw/cwai/login/Logout',
  algorithmPage: '/gtw/cwai/algorithm/page',
  // spec 4.10 (shapes in README.md "Algorithms and pipeline layouts")
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
  deviceStatus: '/gtw/cwai/System/QueryDeviceStatus',
  memoryStatus: '/v1/cwai/aihost/QueryDeviceMemStatus',
  modelList: '/gtw/cwai/atomic/Model/list',
  modelUpload: '/gtw/cwai/atomic/Model/upload',
  modelDelete: '/gtw/cwai/atomic/Model/delete',
  modelExport: '/gtw/cwai/atomic/model/exportConfig',
  viewRoutes: '/v1/cwai/aihost/ViewRoutes',
  probe: '/v1/cwai/aihost/Probe',
  interfaceDocUrl: '/gtw/cwai/System/QueryInterfaceDocUrl',
} as const
