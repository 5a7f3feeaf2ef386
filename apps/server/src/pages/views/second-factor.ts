import { renderSVG } from 'uqr';
import type { PageLook } from '../look.js';
import { Html, html, page } from './html.js';
import { passkeyForm } from './passkey.js';

/** The hidden fields every second-factor form carries: the interaction and its CSRF token. */
export interface FormBinding {
  interactionId: string;
  csrfToken: string;
}

const hidden = (form: FormBinding) =>
  html`<input type="hidden" name="interaction" value="${form.interactionId}">
<input type="hidden" name="csrf" value="${form.csrfToken}">`;

const alertOf = (error: string | undefined) =>
  error === undefined ? undefined : html`<p class="alert" role="alert" id="code-error">${error}</p>`;

const codeInput = (look: PageLook, error: string | undefined, autocomplete: string) =>
  html`<label for="code">${look.t.factors.code}</label>
<input type="text" id="code" name="code" inputmode="text" autocomplete="${autocomplete}" autocapitalize="none" spellcheck="false" maxlength="32" required${error === undefined ? '' : html` aria-describedby="code-error"`} autofocus>`;

/** The step after the password: a TOTP code or a recovery code, or a passkey. */
export function secondFactorPage(options: {
  look: PageLook;
  action: string;
  form: FormBinding;
  /** The user's passkeys, when they have any: where the answer posts and the `get()` options. */
  passkey?: { action: string; options: Record<string, unknown> } | undefined;
  error?: string | undefined;
}): string {
  const { look } = options;
  const { t } = look;
  return page({
    title: t.factors.title,
    look,
    body: html`<h1>${t.factors.title}</h1>
<p>${t.factors.enterCode}</p>
${alertOf(options.error)}
<form method="post" action="${options.action}" novalidate>
${hidden(options.form)}
${codeInput(look, options.error, 'one-time-code')}
<button type="submit">${t.factors.verify}</button>
</form>
${
  options.passkey === undefined
    ? undefined
    : passkeyForm({
        look,
        action: options.passkey.action,
        form: options.form,
        kind: 'authenticate',
        webauthn: options.passkey.options,
        label: t.passkeys.useAsSecondFactor,
      })
}`,
  });
}

/**
 * The QR code of an `otpauth://` URI as inline SVG: drawn here, so the secret never leaves for
 * a QR service and the page's CSP needs no image source.
 */
function qrCode(uri: string, label: string): Html {
  const svg = renderSVG(uri, { border: 2 }).replace(
    '<svg ',
    `<svg role="img" aria-label="${label.replace(/[<>"&]/g, '')}" width="220" height="220" `,
  );
  return new Html(svg);
}

/** Enrolling a TOTP authenticator: the QR code, the key as text, and the first code. */
export function totpEnrolmentPage(options: {
  look: PageLook;
  action: string;
  form: FormBinding;
  factorId: string;
  uri: string;
  secret: string;
  required?: boolean;
  error?: string | undefined;
}): string {
  const { look } = options;
  const { t } = look;
  const grouped = options.secret.match(/.{1,4}/g)?.join(' ') ?? options.secret;
  return page({
    title: t.factors.setUpTitle,
    look,
    body: html`<h1>${t.factors.setUpTitle}</h1>
${options.required ? html`<p>${t.factors.setUpRequired}</p>` : undefined}
<p>${t.factors.scan}</p>
<p class="qr">${qrCode(options.uri, t.factors.qrLabel)}</p>
<p>${t.factors.key}: <code id="totp-secret">${grouped}</code></p>
${alertOf(options.error)}
<form method="post" action="${options.action}" novalidate>
${hidden(options.form)}
<input type="hidden" name="factor" value="${options.factorId}">
${codeInput(look, options.error, 'one-time-code')}
<button type="submit">${t.factors.verify}</button>
</form>`,
  });
}

/** The recovery codes, shown once, and the way on. */
export function recoveryCodesPage(options: {
  look: PageLook;
  codes: readonly string[];
  /** A form that carries on (the sign-in), or a link back (the account page). */
  next: { action: string; form: FormBinding } | { href: string };
}): string {
  const { look } = options;
  const { t } = look;
  const { next } = options;
  return page({
    title: t.factors.recoveryTitle,
    look,
    body: html`<h1>${t.factors.recoveryTitle}</h1>
<p>${t.factors.recoveryIntro}</p>
<ul class="recovery-codes">${options.codes.map((code) => html`<li><code>${code}</code></li>`)}</ul>
${
  'href' in next
    ? html`<p><a href="${next.href}">${t.factors.continue}</a></p>`
    : html`<form method="post" action="${next.action}">
${hidden(next.form)}
<button type="submit">${t.factors.continue}</button>
</form>`
}`,
  });
}

/** A factor as the account page lists it. */
export interface ListedFactor {
  id: string;
  kind: 'totp' | 'webauthn';
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** The account page: the user's second factors, adding one, recovery codes. */
export function accountPage(options: {
  look: PageLook;
  username: string;
  paths: { add: string; remove: string; recoveryCodes: string };
  form: FormBinding;
  factors: readonly ListedFactor[];
  recoveryLeft: number;
  /** Adding a passkey: where its form posts and the `navigator.credentials.create()` options. */
  passkey?: { action: string; options: Record<string, unknown> } | undefined;
  notice?: string | undefined;
  error?: string | undefined;
}): string {
  const { look, form, paths } = options;
  const { t } = look;
  const listed = options.factors.map(
    (
      f,
    ) => html`<li><strong>${f.name}</strong>${f.kind === 'webauthn' ? html` <span class="muted">(${t.passkeys.kind})</span>` : undefined} <span class="muted">${t.passkeys.created(f.createdAt.toISOString().slice(0, 10))}</span>${f.lastUsedAt === null ? undefined : html` <span class="muted">(${t.factors.lastUsed(f.lastUsedAt.toISOString().slice(0, 10))})</span>`}
<form method="post" action="${paths.remove}">
${hidden(form)}
<input type="hidden" name="factor" value="${f.id}">
<button type="submit" class="secondary">${t.factors.remove} ${f.name}</button>
</form></li>`,
  );
  return page({
    title: t.factors.listTitle,
    look,
    body: html`<h1>${t.factors.listTitle}</h1>
<p>${t.signedInAs(options.username)}</p>
${options.notice === undefined ? undefined : html`<p role="status">${options.notice}</p>`}
${alertOf(options.error)}
${options.factors.length === 0 ? html`<p>${t.factors.none}</p>` : html`<ul class="factors">${listed}</ul>`}
<form method="post" action="${paths.add}" novalidate>
${hidden(form)}
<label for="name">${t.factors.name}</label>
<input type="text" id="name" name="name" value="${t.factors.defaultName}" maxlength="64" required>
<button type="submit">${t.factors.add}</button>
</form>
${
  options.passkey === undefined
    ? undefined
    : passkeyForm({
        look,
        action: options.passkey.action,
        form,
        kind: 'register',
        webauthn: options.passkey.options,
        label: t.passkeys.add,
        fields: html`<label for="passkey-name">${t.factors.name}</label>
<input type="text" id="passkey-name" name="name" value="${t.passkeys.defaultName}" maxlength="64" required>`,
      })
}
${
  options.factors.length === 0
    ? undefined
    : html`<p class="muted">${t.factors.recoveryLeft(options.recoveryLeft)}</p>
<form method="post" action="${paths.recoveryCodes}">
${hidden(form)}
<button type="submit" class="secondary">${t.factors.regenerate}</button>
</form>`
}`,
  });
}
