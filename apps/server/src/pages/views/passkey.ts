import type { PageLook } from '../look.js';
import { type Html, html } from './html.js';
import type { FormBinding } from './second-factor.js';

/**
 * A form that runs a WebAuthn ceremony through the pages' script (`passkey.js`): hidden until
 * the script finds WebAuthn, it carries the server's options and posts the browser's answer in
 * `credential`. `conditional` also offers the passkey from the username field's autofill.
 */
export function passkeyForm(options: {
  look: PageLook;
  action: string;
  form: FormBinding;
  kind: 'register' | 'authenticate' | 'conditional';
  webauthn: Record<string, unknown>;
  label: string;
  /** Fields of the form besides the binding (the passkey's name). */
  fields?: Html;
}): Html {
  const { look, form } = options;
  return html`<form method="post" action="${options.action}" data-webauthn="${options.kind}" data-webauthn-options="${JSON.stringify(options.webauthn)}" class="passkey" hidden>
<input type="hidden" name="interaction" value="${form.interactionId}">
<input type="hidden" name="csrf" value="${form.csrfToken}">
<input type="hidden" name="credential" value="">
${options.fields}
<p class="alert" role="alert" data-webauthn-error hidden>${look.t.passkeys.cancelled}</p>
<button type="submit" class="secondary">${options.label}</button>
</form>
<script src="${look.assetsPath}/passkey.js" defer></script>`;
}
