import type { PageLook } from '../look.js';
import { type DecisionPageOptions, describeScope, type ResourceTarget, targetList } from './consent.js';
import { type Html, html, page } from './html.js';

/** The verification page's first form: the user code shown on the device (RFC 8628 §3.3). */
export function deviceCodePage(options: {
  look: PageLook;
  action: string;
  userCode?: string | undefined;
  error?: string | undefined;
}): string {
  const alert: Html | undefined =
    options.error === undefined
      ? undefined
      : html`<p class="alert" role="alert" id="code-error">${options.error}</p>`;
  const { look } = options;
  const { t } = look;
  return page({
    title: t.connectDevice,
    look,
    body: html`<h1>${t.connectDevice}</h1>
<p>${t.enterCode}</p>
${alert}
<form method="post" action="${options.action}" novalidate>
<label for="user_code">${t.code}</label>
<input type="text" id="user_code" name="user_code" value="${options.userCode ?? ''}" placeholder="BCDF-GHJK" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="32" required${options.error === undefined ? '' : ' aria-describedby="code-error"'} autofocus>
<button type="submit">${t.continue}</button>
</form>`,
  });
}

/**
 * Asks the signed-in person, explicitly, whether the device may act for them (RFC 8628 §5.4:
 * remote phishing), naming the application, the code, what it asks for and where its tokens go.
 */
export function deviceConfirmPage(
  options: DecisionPageOptions & { userCode: string; targets: ResourceTarget[] },
): string {
  const { look } = options;
  const { t } = look;
  return page({
    title: t.allowDevice,
    look,
    body: html`<h1>${t.allowOnDevice(options.clientName)}</h1>
<p>${t.deviceAsks(options.username, options.userCode, options.clientName)}</p>
<p>${t.onlyIfYou}</p>
${options.scopes.length === 0 ? undefined : html`<p>${t.ableTo}</p><ul class="scopes">${options.scopes.map((scope) => html`<li>${describeScope(t, scope)}</li>`)}</ul>`}
${targetList(t, options.targets)}
<form method="post" action="${options.action}">
<input type="hidden" name="interaction" value="${options.interactionId}">
<input type="hidden" name="csrf" value="${options.csrfToken}">
<button type="submit" name="decision" value="allow">${t.allow}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t.deny}</button>
</form>`,
  });
}
