import { type DecisionPageOptions, describeScope, type ResourceTarget, targetList } from './consent.js';
import { type Html, html, page } from './html.js';

/** The verification page's first form: the user code shown on the device (RFC 8628 §3.3). */
export function deviceCodePage(options: {
  assetsPath: string;
  action: string;
  userCode?: string | undefined;
  error?: string | undefined;
}): string {
  const alert: Html | undefined =
    options.error === undefined
      ? undefined
      : html`<p class="alert" role="alert" id="code-error">${options.error}</p>`;
  return page({
    title: 'Connect a device',
    assetsPath: options.assetsPath,
    body: html`<h1>Connect a device</h1>
<p>Enter the code shown on your device.</p>
${alert}
<form method="post" action="${options.action}" novalidate>
<label for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" value="${options.userCode ?? ''}" placeholder="BCDF-GHJK" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="32" required${options.error === undefined ? '' : ' aria-describedby="code-error"'} autofocus>
<button type="submit">Continue</button>
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
  return page({
    title: 'Allow device',
    assetsPath: options.assetsPath,
    body: html`<h1>Allow ${options.clientName} on your device?</h1>
<p>Signed in as <strong>${options.username}</strong>. A device showing the code <strong id="user-code">${options.userCode}</strong> asks to use <strong>${options.clientName}</strong> as you.</p>
<p>Only allow it if you started this on a device you control. If someone sent you this code, deny.</p>
${options.scopes.length === 0 ? undefined : html`<p>It will be able to:</p><ul class="scopes">${options.scopes.map((scope) => html`<li>${describeScope(scope)}</li>`)}</ul>`}
${targetList(options.targets)}
<form method="post" action="${options.action}">
<input type="hidden" name="interaction" value="${options.interactionId}">
<input type="hidden" name="csrf" value="${options.csrfToken}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  });
}
