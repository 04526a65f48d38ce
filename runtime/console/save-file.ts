import type { DownloadedFile } from '../client/types.ts'

/**
 * Saves a file the device answered to a POST (exports need the mtk header, so a plain link
 * cannot fetch them): through an object URL and a download link with the device's file name.
 */
export function saveFile(file: DownloadedFile): void {
  const url = URL.createObjectURL(file.blob)
  const link = document.createElement('a')
  link.href = url
  link.download = file.fileName
  link.hidden = true
  document.body.append(link)
  link.click()
  link.remove()
  // Revoked a while later: some browsers read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
