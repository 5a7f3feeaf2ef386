import { html, page } from './html.js';

/** A page that only says something: an error the user must see, or "you are signed out". */
export function messagePage(options: {
  assetsPath: string;
  title: string;
  message: string;
  alert?: boolean;
  /** On an error page: the request's id, for the person to quote to whoever runs idgate. */
  requestId?: string;
}): string {
  return page({
    title: options.title,
    assetsPath: options.assetsPath,
    body: html`<h1>${options.title}</h1>
${options.alert ? html`<p class="alert" role="alert">${options.message}</p>` : html`<p>${options.message}</p>`}
${
  options.requestId === undefined
    ? ''
    : html`<p>Go back to the application you came from and try again. If this happens again, tell whoever runs
this sign-in service what you were doing and this request id.</p>
<p class="muted">Request id: <code>${options.requestId}</code></p>`
}`,
  });
}

/** Asks before signing out when the request did not prove it came from the application. */
export function logoutConfirmPage(options: {
  assetsPath: string;
  action: string;
  csrfToken: string;
  username: string;
  params: Record<string, string>;
}): string {
  return page({
    title: 'Sign out',
    assetsPath: options.assetsPath,
    body: html`<h1>Sign out?</h1>
<p>You are signed in as <strong>${options.username}</strong>.</p>
<form method="post" action="${options.action}">
<input type="hidden" name="csrf" value="${options.csrfToken}">
${Object.entries(options.params).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" name="confirm" value="yes">Sign out</button>
</form>`,
  });
}
