import type { PageLook } from '../look.js';
import { type Html, html, page } from './html.js';

/** A page that only says something: an error the user must see, or "you are signed out". */
export function messagePage(options: {
  look: PageLook;
  title: string;
  message: string | Html;
  alert?: boolean;
  /** On an error page: the request's id, for the person to quote to whoever runs idgate. */
  requestId?: string;
}): string {
  const { look } = options;
  return page({
    title: options.title,
    look,
    body: html`<h1>${options.title}</h1>
${options.alert ? html`<p class="alert" role="alert">${options.message}</p>` : html`<p>${options.message}</p>`}
${
  options.requestId === undefined
    ? ''
    : html`<p>${look.t.wayBack}</p>
<p class="muted">${look.t.requestId}: <code>${options.requestId}</code></p>`
}`,
  });
}

/** Asks before signing out when the request did not prove it came from the application. */
export function logoutConfirmPage(options: {
  look: PageLook;
  action: string;
  csrfToken: string;
  username: string;
  params: Record<string, string>;
}): string {
  const { look } = options;
  const { t } = look;
  return page({
    title: t.signOut,
    look,
    body: html`<h1>${t.signOutQuestion}</h1>
<p>${t.signedInAs(options.username)}</p>
<form method="post" action="${options.action}">
<input type="hidden" name="csrf" value="${options.csrfToken}">
${Object.entries(options.params).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" name="confirm" value="yes">${t.signOut}</button>
</form>`,
  });
}
