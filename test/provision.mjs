#!/usr/bin/env node
// Provisions what the test suite needs beyond npm packages, before `npm test` runs it (the
// `pretest` script). A new machine has Node and npm only: what is missing is installed from
// Debian's packages when this runs as root, otherwise it stops with the exact command to run.
import { execFileSync, spawnSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * One line per thing the tests use: how to tell it is there (an executable on PATH or under
 * the system folders, or a file), the Debian package that brings it, and which tests need it.
 */
export const requirements = [
  { executable: 'mosquitto', debian: 'mosquitto', for: 'the MQTT broker of the event tests' },
  { executable: 'chromium-headless-shell', debian: 'chromium-headless-shell', for: 'the browser tests of the console (playwright-core drives Chromium\'s headless shell)' },
  { file: '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', debian: 'fonts-dejavu-core', for: 'the font the OCR tests render text with' },
  { executable: 'openssl', debian: 'openssl', for: 'the TLS certificates of the MQTT settings tests' },
  { executable: 'ip', debian: 'iproute2', for: 'the network tests (ip -json, network namespaces) and the network area itself' },
  { file: '/usr/lib/python3/dist-packages/gi/__init__.py', debian: 'python3-gi', for: 'the RTSP server of the camera tests (test/helpers/rtsp-server.py)' },
  { file: '/usr/lib/x86_64-linux-gnu/girepository-1.0/GstRtspServer-1.0.typelib', debian: 'gir1.2-gst-rtsp-server-1.0', for: 'the RTSP server of the camera tests (GStreamer gst-rtsp-server)' },
  { file: '/usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstisomp4.so', debian: 'gstreamer1.0-plugins-good', for: 'mp4 demuxing and RTP payloading in that RTSP server' },
  { executable: 'ffprobe', debian: 'ffmpeg', for: 'the recording and live view tests, which measure clips and streams with a tool apart from the device\'s own ffmpeg' },
  { file: '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', debian: 'faketime', for: 'the wall-clock step test (test/reliability/clock-step.e2e.test.ts), which runs the device under libfaketime' },
]

// mosquitto installs into /usr/sbin, which a non-root PATH often lacks.
const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']

const usable = (file) => {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}
const readable = (file) => {
  try {
    accessSync(file, constants.R_OK)
    return true
  } catch {
    return false
  }
}

export function isPresent(requirement) {
  if (requirement.file) return readable(requirement.file)
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...SYSTEM_DIRS]
  return dirs.some((dir) => usable(path.join(dir, requirement.executable)))
}

function main() {
  const missing = requirements.filter((requirement) => !isPresent(requirement))
  if (missing.length === 0) return 0
  const packages = [...new Set(missing.map((requirement) => requirement.debian))]
  const command = `apt-get update && apt-get install -y --no-install-recommends ${packages.join(' ')}`
  console.log(`test provisioning: missing ${missing.map((r) => `${r.executable ?? r.file} (${r.for})`).join('; ')}`)
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0
  if (!isRoot || !hasApt) {
    console.error(`test provisioning: install them first, as root on a Debian-based system:\n  sudo sh -c '${command}'`)
    return 1
  }
  console.log(`test provisioning: ${command}`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env })
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: 'inherit', env })
  const stillMissing = requirements.filter((requirement) => !isPresent(requirement))
  if (stillMissing.length > 0) {
    console.error(`test provisioning: still missing after the install: ${stillMissing.map((r) => r.executable ?? r.file).join(', ')}`)
    return 1
  }
  return 0
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exit(main())
