/**
 * The pages' only script (`/oauth/assets/passkey.js`, allowed by `script-src 'self'`): it hands
 * the WebAuthn options a form carries (`data-webauthn-options`, JSON from the server) to
 * `navigator.credentials`, puts the browser's answer as JSON into the form's `credential` field
 * and submits the form, whose route verifies it. `data-webauthn` says what the form does:
 * `register` (create a passkey, on submit), `authenticate` (sign in with one, on submit), and
 * `conditional` too (also offered from the username field's passkey autofill when the page
 * loads). Without JavaScript or WebAuthn the forms stay hidden and the rest of the page works.
 */
export const PASSKEY_SCRIPT = `(() => {
'use strict';
const b64 = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
const str = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const creds = (list) => (list || []).map((c) => ({ ...c, id: b64(c.id) }));
const creation = (o) => ({ ...o, challenge: b64(o.challenge), user: { ...o.user, id: b64(o.user.id) }, excludeCredentials: creds(o.excludeCredentials) });
const request = (o) => ({ ...o, challenge: b64(o.challenge), allowCredentials: creds(o.allowCredentials) });
const answer = (c) => {
  const r = c.response;
  const response = { clientDataJSON: str(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = str(r.attestationObject);
    response.transports = r.getTransports ? r.getTransports() : [];
  }
  if (r.authenticatorData) response.authenticatorData = str(r.authenticatorData);
  if (r.signature) response.signature = str(r.signature);
  if (r.userHandle) response.userHandle = str(r.userHandle);
  return JSON.stringify({ id: c.id, rawId: str(c.rawId), type: c.type, response, authenticatorAttachment: c.authenticatorAttachment || undefined, clientExtensionResults: c.getClientExtensionResults() });
};
if (!window.PublicKeyCredential || !navigator.credentials) return;
for (const form of document.querySelectorAll('form[data-webauthn]')) {
  const kind = form.dataset.webauthn;
  const options = JSON.parse(form.dataset.webauthnOptions);
  const field = form.querySelector('input[name=credential]');
  const error = form.querySelector('[data-webauthn-error]');
  let pending;
  const run = async (mediation) => {
    if (pending) pending.abort();
    const controller = new AbortController();
    pending = controller;
    try {
      const c = kind === 'register'
        ? await navigator.credentials.create({ publicKey: creation(options), signal: controller.signal })
        : await navigator.credentials.get({ publicKey: request(options), mediation, signal: controller.signal });
      if (!c) return;
      field.value = answer(c);
      form.submit();
    } catch (e) {
      if (controller.signal.aborted || !error) return;
      error.hidden = false;
    }
  };
  form.hidden = false;
  form.addEventListener('submit', (event) => {
    if (field.value) return;
    event.preventDefault();
    run(undefined);
  });
  if (kind === 'conditional' && PublicKeyCredential.isConditionalMediationAvailable)
    PublicKeyCredential.isConditionalMediationAvailable().then((yes) => { if (yes) run('conditional'); });
}
})();
`;
