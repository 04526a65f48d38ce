import { html } from 'htm/preact'
import { showError, type NextStep } from '../messages.ts'

/** The console's link for an error's next step (a page of the console that does it). */
function NextStepLink({ next }: { next: NextStep }) {
  if (next.kind === 'upload-model') {
    return html`<p class="error-next"><a class="button" href=${`#/models?upload=${encodeURIComponent(next.modelId)}`} data-testid="error-next">Upload the model “${next.modelId}”</a></p>`
  }
  if (next.kind === 'camera-tasks') {
    return html`<p class="error-next"><a class="button" href=${`#/tasks?camera=${encodeURIComponent(next.cameraId)}`} data-testid="error-next">Open the tasks using this camera</a></p>`
  }
  return html`<p class="error-next"><a class="button" href=${`#/tasks?algorithm=${encodeURIComponent(next.algorithmId)}`} data-testid="error-next">Open the tasks using ${next.algorithmId}</a></p>`
}

/**
 * A failed action and the context the ErrorPanel names it by (the step or the thing it was
 * about): the panel's own props, so a view keeps one and spreads it, `<${ErrorPanel} ...${failure} />`
 * (null shows nothing).
 */
export type Failure = { error: unknown; context: string }

/**
 * An error as spec 7.2 asks: the messageKey text, every detail the device sent, the action and
 * wait, and the console's next step where it has one. Machine codes (key, action code, HTTP
 * status) sit under "Technical details", for support and integrators.
 */
export function ErrorPanel({ error, context }: { error: unknown; context?: string }) {
  if (!error) return null
  const shown = showError(error)
  return html`<div class="error" role="alert" data-testid="error">
    <p class="error-title">${context ? html`<span class="error-context">${context}: </span>` : null}<span data-testid="error-text">${shown.title}</span></p>
    ${shown.facts.length ? html`<dl class="facts">
      ${shown.facts.map(([label, value]) => html`<dt>${label}</dt><dd data-fact=${label}>${value}</dd>`)}
    </dl>` : null}
    ${shown.actionText ? html`<p class="error-action"><strong>What to do: </strong><span data-testid="error-action-text">${shown.actionText}</span></p>` : null}
    ${shown.retryAfterSeconds !== null ? html`<p data-testid="error-retry-after">Wait ${shown.retryAfterSeconds} s before trying again.</p>` : null}
    ${shown.next ? html`<${NextStepLink} next=${shown.next} />` : null}
    ${shown.messageKey || shown.action || (shown.httpStatus && shown.httpStatus !== 200) ? html`<details class="tech"><summary>Technical details</summary><dl class="facts">
      ${shown.messageKey ? html`<dt>Key</dt><dd><code data-testid="error-key">${shown.messageKey}</code></dd>` : null}
      ${shown.action ? html`<dt>Action code</dt><dd><code data-testid="error-action">${shown.action}</code></dd>` : null}
      ${shown.httpStatus && shown.httpStatus !== 200 ? html`<dt>HTTP</dt><dd>${shown.httpStatus}</dd>` : null}
    </dl></details>` : null}
  </div>`
}
