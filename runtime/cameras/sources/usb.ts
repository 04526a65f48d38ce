import { readdir, readFile } from 'node:fs/promises'
import { USB_DEVICE } from '../url.ts'
import type { UsbDevice } from '../../../shared/cameras/types.ts'
import { baseFields, invalid, refuse } from './fields.ts'
import type { CameraSource } from './types.ts'

/** `usb`: a V4L2 capture device (`/dev/videoN`) read by ffmpeg. */
export const usb: CameraSource = {
  fields: (input, stored) => {
    if (!input.device || !USB_DEVICE.test(input.device)) throw invalid('device', 'must be a V4L2 device path /dev/videoN')
    if (input.url !== undefined) refuse('usb', 'url')
    return { ...baseFields(input, stored), device: input.device }
  },
  input: { args: () => ['-f', 'v4l2'] },
  open: (context) => Promise.resolve(context.ffmpeg({ sourceType: 'usb', input: context.row.device! })),
}

/** V4L2 capture devices (`/dev/videoN`) with their driver's name; empty without any. */
export async function listUsbDevices(): Promise<UsbDevice[]> {
  const names = (await readdir('/dev').catch(() => [] as string[])).filter((name) => /^video\d+$/.test(name))
  const devices: UsbDevice[] = []
  for (const name of names.sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))) {
    const label = await readFile(`/sys/class/video4linux/${name}/name`, 'utf8').catch(() => name)
    devices.push({ device: `/dev/${name}`, name: label.trim() })
  }
  return devices
}
