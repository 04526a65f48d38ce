import { html, render } from 'htm/preact'
import { App } from './app.ts'

render(html`<${App} />`, document.getElementById('app')!)
