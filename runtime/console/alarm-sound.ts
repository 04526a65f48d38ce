/**
 * The optional sound of an alarm toast (docs/console-and-cli.md "Review"): off unless the
 * operator switches it on (Review page), remembered by this browser. A short two-tone beep made
 * with Web Audio: no file to fetch.
 */
const KEY = 'device-console.alarm-sound'
let context: AudioContext | null = null

export const alarmSound = {
  enabled(): boolean {
    try {
      return localStorage.getItem(KEY) === 'on'
    } catch {
      return false
    }
  },
  set(on: boolean) {
    try {
      if (on) localStorage.setItem(KEY, 'on')
      else localStorage.removeItem(KEY)
    } catch {
      // storage unavailable: the choice lasts this page only
    }
    // Switched on by a click: the browser lets the page make sound from now on.
    if (on) context ??= new AudioContext()
  },
  play() {
    if (!this.enabled()) return
    try {
      context ??= new AudioContext()
      const start = context.currentTime
      for (const [i, frequency] of [880, 660].entries()) {
        const tone = context.createOscillator()
        const gain = context.createGain()
        tone.frequency.value = frequency
        gain.gain.setValueAtTime(0.2, start + i * 0.2)
        gain.gain.exponentialRampToValueAtTime(0.001, start + i * 0.2 + 0.18)
        tone.connect(gain).connect(context.destination)
        tone.start(start + i * 0.2)
        tone.stop(start + i * 0.2 + 0.2)
      }
    } catch {
      // no audio output: the toast alone
    }
  },
}
