import { html } from 'htm/preact'
import { showError } from '../messages.ts'

/** An error as spec 7.2 asks: the messageKey text, actual value, limit, action and wait. */
export function ErrorPanel({ error, context }: { error: unknown; context?: string }) {
  if (!error) return null
  const shown = showError(error)
  return html`<div class="error" role="alert" data-testid="error">
    <p class="error-title">${context ? html`<span class="error-context">${context}: </span>` : null}<span data-testid="error-text">${shown.title}</span></p>
    ${shown.facts.length || shown.messageKey ? html`<dl class="facts">
      ${shown.facts.map(([label, value]) => html`<dt>${label}</dt><dd data-fact=${label}>${value}</dd>`)}
      ${shown.messageKey ? html`<dt>Key</dt><dd><code data-testid="error-key">${shown.messageKey}</code></dd>` : null}
      ${shown.httpStatus && shown.httpStatus !== 200 ? html`<dt>HTTP</dt><dd>${shown.httpStatus}</dd>` : null}
    </dl>` : null}
    ${shown.action ? html`<p class="error-action"><strong>What to do: </strong><span data-testid="error-action-text">${shown.actionText}</span> <code data-testid="error-action">${shown.action}</code></p>` : null}
    ${shown.retryAfterSeconds !== null ? html`<p data-testid="error-retry-after">Wait ${shown.retryAfterSeconds} s before trying again.</p>` : null}
  </div>`
}
