import type { PageLook } from '../look.js';
import { type Html, html, page } from './html.js';
import { passkeyForm } from './passkey.js';

/** An external identity provider offered on the login page. */
export interface LoginProvider {
  name: string;
  displayName: string;
  href: string;
}

/** The username/password form, with a button per external identity provider. */
export function loginPage(options: {
  look: PageLook;
  action: string;
  interactionId: string;
  csrfToken: string;
  clientName?: string | undefined;
  username?: string | undefined;
  error?: string | undefined;
  providers?: LoginProvider[];
  /** Password providers (LDAP) the form may check the credentials with, besides local accounts. */
  passwordProviders?: Array<{ name: string; displayName: string }>;
  provider?: string | undefined;
  /** Signing in with a passkey alone: where the answer posts and the `get()` options. */
  passkey?: { action: string; options: Record<string, unknown> } | undefined;
}): string {
  const { look } = options;
  const { t } = look;
  const alert: Html | undefined =
    options.error === undefined
      ? undefined
      : html`<p class="alert" role="alert" id="login-error">${options.error}</p>`;
  const providers = options.providers ?? [];
  return page({
    title: t.signIn,
    look,
    body: html`<h1>${t.signIn}</h1>
${options.clientName === undefined ? undefined : html`<p>${t.continueTo(options.clientName)}</p>`}
${alert}
<form method="post" action="${options.action}" novalidate>
<input type="hidden" name="interaction" value="${options.interactionId}">
<input type="hidden" name="csrf" value="${options.csrfToken}">
${
  (options.passwordProviders ?? []).length === 0
    ? undefined
    : html`<label for="provider">${t.account}</label>
<select id="provider" name="provider">
<option value="local">${t.localAccount(look.productName)}</option>
${(options.passwordProviders ?? []).map((p) => html`<option value="${p.name}"${p.name === options.provider ? html` selected` : undefined}>${p.displayName}</option>`)}
</select>`
}
<label for="username">${t.username}</label>
<input type="text" id="username" name="username" value="${options.username ?? ''}" autocomplete="${options.passkey === undefined ? 'username' : 'username webauthn'}" autocapitalize="none" spellcheck="false" required${options.error === undefined ? '' : ' aria-describedby="login-error"'} autofocus>
<label for="password">${t.password}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">${t.signIn}</button>
</form>
${
  options.passkey === undefined
    ? undefined
    : passkeyForm({
        look,
        action: options.passkey.action,
        form: { interactionId: options.interactionId, csrfToken: options.csrfToken },
        // After a refusal the autofill is not offered again at once: the button is.
        kind: options.error === undefined ? 'conditional' : 'authenticate',
        webauthn: options.passkey.options,
        label: t.passkeys.signIn,
      })
}
${
  providers.length === 0
    ? undefined
    : html`<nav class="providers" aria-label="${t.otherWays}">${providers.map(
        (p) => html`<a href="${p.href}">${t.signInWith(p.displayName)}</a>`,
      )}</nav>`
}`,
  });
}
