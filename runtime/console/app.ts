import { html } from 'htm/preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { Session } from '../client/types.ts'
import { ConsoleTasks } from './console-tasks.ts'
import { browserResumeStore, createClient, noticeStore, sessionStore } from './session.ts'
import { SignIn } from './views/SignIn.ts'
import { ChangePassword } from './views/ChangePassword.ts'
import { Detect, type DetectMemory } from './views/Detect.ts'
import { Device } from './views/Device.ts'
import { Algorithms } from './views/Algorithms.ts'
import { Tasks } from './views/Tasks.ts'
import { Models } from './views/Models.ts'
import { Logs } from './views/Logs.ts'
import { ApiExplorer } from './views/ApiExplorer.ts'
import { Metrics } from './views/Metrics.ts'
import { MetricsHistory } from './metrics-history.ts'
import { NAV_SECTIONS, PAGES, type Page } from './pages.ts'
import { AlarmToasts } from './components/AlarmToasts.ts'
import { lazy } from './lazy.ts'
import { Audio } from './views/Audio.ts'
import { System, LOGO_CHANGED } from './views/System.ts'
import { LOGO_ROUTE } from '../../shared/system/types.ts'
import { Backup } from './views/Backup.ts'
import { Galleries } from './views/Galleries.ts'

// Loaded on first use, from their own chunks (runtime/console/step.mjs).
const Cameras = lazy(() => import('./views/Cameras.ts').then((m) => m.Cameras), { page: true })
const EventHistory = lazy(() => import('./views/EventHistory.ts').then((m) => m.EventHistory), { page: true })
const Policies = lazy(() => import('./views/Policies.ts').then((m) => m.Policies), { page: true })
const Schedules = lazy(() => import('./views/Schedules.ts').then((m) => m.Schedules), { page: true })
const Network = lazy(() => import('./views/Network.ts').then((m) => m.Network), { page: true })
const Live = lazy(() => import('./views/Live.ts').then((m) => m.Live), { page: true })
const Review = lazy(() => import('./views/Review.ts').then((m) => m.Review), { page: true })
const Recordings = lazy(() => import('./views/Recordings.ts').then((m) => m.Recordings), { page: true })
const Fleet = lazy(() => import('./views/Fleet.ts').then((m) => m.Fleet), { page: true })

type Screen =
  | { name: 'signin'; notice: string | null }
  | { name: 'change'; account: string; password: string | null; forced: boolean }
  | { name: 'app' }

/** `#/models?upload=helmet-classifier` → the page and its parameters. */
const route = (): { page: Page; params: URLSearchParams } => {
  const [name = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?')
  return { page: name in PAGES ? name as Page : 'detect', params: new URLSearchParams(query) }
}
const TITLE = 'Edge AI device'

export function App() {
  const stored = sessionStore.load()
  const [screen, setScreen] = useState<Screen>(stored ? { name: 'app' } : { name: 'signin', notice: noticeStore.load() })
  const [account, setAccount] = useState(stored?.accountName ?? '')
  const [{ page, params }, setRoute] = useState(route())
  // Phones: the navigation folds behind a menu button (styles.css), closed again on each page change.
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [page])
  // What survives a sign-out in the middle of work: the chosen file and algorithm.
  const memory = useRef<DetectMemory>({ file: null, algorithmCode: null, interrupted: false, staleUploadIds: [] })

  /** The sign-in screen with the reason, which a reload keeps showing until the next sign-in. */
  const toSignIn = (notice: string) => {
    noticeStore.save(notice)
    setScreen({ name: 'signin', notice })
  }

  const client = useMemo(() => createClient(() => {
    // Already signed out by a part that said why (a restore's or a reset's restart, a sign-out):
    // a poll answered 401 after it keeps that notice instead of replacing it.
    if (!sessionStore.load()) return
    // spec 5.3: a missing or expired mtk → sign in again; the interrupted upload restarts as a new session.
    sessionStore.clear()
    const stale = browserResumeStore.drain().map((r) => r.uploadId).filter((id): id is string => !!id)
    memory.current.staleUploadIds.push(...stale)
    // The tab's tasks stay recorded: signed in again, the console reuses (or cancels) them.
    if (memory.current.file) memory.current.interrupted = true
    toSignIn('Your session has ended. Sign in again.')
  }), [])
  const tasks = useMemo(() => new ConsoleTasks(client), [client])
  const metrics = useMemo(() => new MetricsHistory(client), [client])
  // Metrics over time are read while signed in, whatever page is open.
  useEffect(() => {
    if (screen.name !== 'app') return
    metrics.start()
    return () => metrics.stop()
  }, [screen.name])

  useEffect(() => {
    const onHash = () => setRoute(route())
    const onHide = () => tasks.cancelOnUnload()
    addEventListener('hashchange', onHash)
    addEventListener('pagehide', onHide)
    return () => { removeEventListener('hashchange', onHash); removeEventListener('pagehide', onHide) }
  }, [])

  // Leaving the Detection page, the console is done with its tasks (they hold models and keep
  // their algorithms from being deleted or replaced, spec 3.2, 4.10).
  useEffect(() => {
    if (screen.name === 'app' && page !== 'detect') tasks.cancelAll().catch(() => undefined)
  }, [page, screen.name])

  useEffect(() => {
    document.title = screen.name === 'signin' ? `Sign in · ${TITLE}` : screen.name === 'change' ? `Change password · ${TITLE}` : `${PAGES[page]} · ${TITLE}`
  }, [page, screen.name])

  // Move focus to the main heading when the screen or page changes (keyboard and screen-reader
  // users), but not on first load, where Tab starts at the skip link.
  const firstRender = useRef(true)
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false
      return
    }
    document.querySelector<HTMLElement>('main h1')?.focus()
  }, [screen.name, page])

  // The device's logo in the header (spec 4.10 System "logo"), fetched with the mtk; the System page says when it changed.
  const [logo, setLogo] = useState<string | null>(null)
  useEffect(() => {
    if (screen.name !== 'app') return
    let url: string | null = null
    const load = () => client.getFile(LOGO_ROUTE).then((file) => {
      if (url) URL.revokeObjectURL(url)
      url = URL.createObjectURL(file.blob)
      setLogo(url)
    }, () => undefined)
    load()
    addEventListener(LOGO_CHANGED, load)
    return () => { removeEventListener(LOGO_CHANGED, load); if (url) URL.revokeObjectURL(url) }
  }, [screen.name])

  const signedIn = (session: Session, password: string | null) => {
    setAccount(session.accountName)
    sessionStore.save({ mtk: session.mtk, accountName: session.accountName })
    noticeStore.clear()
    // spec 5.7: a pending password change blocks business use.
    if (session.passwordChangeRequired) setScreen({ name: 'change', account: session.accountName, password, forced: true })
    else setScreen({ name: 'app' })
  }

  const signOut = async () => {
    await tasks.cancelAll().catch(() => undefined)
    memory.current = { file: null, algorithmCode: null, interrupted: false, staleUploadIds: [] }
    await client.logout().catch(() => undefined)
    sessionStore.clear()
    toSignIn('Signed out.')
  }

  if (screen.name === 'signin') return html`<${Shell}><${SignIn} client=${client} notice=${screen.notice} onSignedIn=${signedIn} /></${Shell}>`
  if (screen.name === 'change') {
    return html`<${Shell}><${ChangePassword} client=${client} account=${screen.account} currentPassword=${screen.password} forced=${screen.forced}
      onChanged=${(session: Session) => signedIn(session, null)} onCancel=${screen.forced ? signOut : () => setScreen({ name: 'app' })} /></${Shell}>`
  }
  return html`<${Shell} logo=${logo} nav=${html`<nav aria-label="Main" class=${menuOpen ? 'open' : undefined}>
      <button type="button" class="menu-button secondary" aria-expanded=${menuOpen} aria-controls="nav-sections" onClick=${() => setMenuOpen(!menuOpen)} data-testid="menu-button">
        ${menuOpen ? 'Close menu' : 'Menu'}</button>
      <div class="nav-sections" id="nav-sections">
        ${NAV_SECTIONS.map((section) => html`<div class="nav-section" role="group" aria-label=${section.title}>
          <span class="nav-title" aria-hidden="true">${section.title}</span>
          ${section.pages.map((key) => html`<a href=${`#/${key}`} aria-current=${page === key ? 'page' : undefined}>${PAGES[key]}</a>`)}
          ${section.title === 'Developers' ? html`<a href="/staticfile/httpInterface.html" target="_blank" rel="noopener">API docs</a>` : null}
        </div>`)}
      </div>
    </nav>
    <div class="account">
      <span data-testid="account">${account}</span>
      <button type="button" class="link" onClick=${() => setScreen({ name: 'change', account, password: null, forced: false })}>Change password</button>
      <button type="button" class="secondary" onClick=${signOut} data-testid="sign-out">Sign out</button>
    </div>`}>
    <${AlarmToasts} client=${client} />
    ${page === 'detect' ? html`<${Detect} client=${client} account=${account} memory=${memory.current} tasks=${tasks} />`
      : page === 'tasks' ? html`<${Tasks} client=${client} tasks=${tasks} algorithm=${params.get('algorithm')} camera=${params.get('camera')} />`
      : page === 'algorithms' ? html`<${Algorithms} client=${client} account=${account} />`
      : page === 'models' ? html`<${Models} client=${client} account=${account} uploadModelId=${params.get('upload')} />`
      : page === 'logs' ? html`<${Logs} client=${client} />`
      : page === 'api' ? html`<${ApiExplorer} client=${client} />`
      : page === 'metrics' ? html`<${Metrics} history=${metrics} />`
      : page === 'cameras' ? html`<${Cameras} client=${client} account=${account} />`
      : page === 'audio' ? html`<${Audio} client=${client} account=${account} />`
      : page === 'system' ? html`<${System} client=${client} account=${account} />`
      : page === 'backup' ? html`<${Backup} client=${client} account=${account} onRestarted=${(notice: string) => { sessionStore.clear(); toSignIn(notice) }} />`
      : page === 'network' ? html`<${Network} client=${client} />`
      : page === 'galleries' ? html`<${Galleries} client=${client} account=${account} />`
      : page === 'events' ? html`<${EventHistory} client=${client} />`
      : page === 'policies' ? html`<${Policies} client=${client} />`
      : page === 'schedules' ? html`<${Schedules} client=${client} />`
      : page === 'live' ? html`<${Live} client=${client} />`
      : page === 'recordings' ? html`<${Recordings} client=${client} />`
      : page === 'review' ? html`<${Review} client=${client} />`
      : page === 'fleet' ? html`<${Fleet} client=${client} />`
      : html`<${Device} client=${client} />`}
  </${Shell}>`
}

function Shell({ nav, logo, children }: { nav?: unknown; logo?: string | null; children?: unknown }) {
  return html`<a class="skip" href="#main">Skip to content</a>
    <header class="top">${logo ? html`<img class="brand-logo" src=${logo} alt="" data-testid="brand-logo" />` : null}<span class="brand">Edge AI device</span>${nav ?? null}</header>
    ${children}`
}
