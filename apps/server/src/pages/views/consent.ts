import type { Messages } from '../i18n.js';
import type { PageLook } from '../look.js';
import { type Html, html, page } from './html.js';

/** One line of a consent page for `scope`, in the page's language. */
export function describeScope(t: Messages, scope: string): string {
  return t.scopes[scope] ?? t.otherScope(scope);
}

/** Where a grant's tokens will be accepted, as the consent and device pages name it. */
export interface ResourceTarget {
  /** What kind of thing it is: a registered cluster's audience, or any other audience. */
  kind: 'cluster' | 'audience';
  name: string;
}

/** The list of every cluster (and other audience) a grant will reach, or nothing when there is none. */
export function targetList(t: Messages, targets: readonly ResourceTarget[]): Html | undefined {
  if (targets.length === 0) return undefined;
  return html`<p>${t.tokensFor}</p><ul class="scopes targets">${targets.map((target) => html`<li>${target.kind === 'cluster' ? t.cluster : t.audience}: <strong>${target.name}</strong></li>`)}</ul>`;
}

/** What a page asking the signed-in user to allow or deny an application shows and posts. */
export interface DecisionPageOptions {
  look: PageLook;
  action: string;
  interactionId: string;
  csrfToken: string;
  clientName: string;
  username: string;
  scopes: string[];
}

/**
 * Asks the signed-in user whether a client may have the listed scopes, naming every cluster (and
 * other audience) its grant will reach.
 */
export function consentPage(options: DecisionPageOptions & { targets: ResourceTarget[] }): string {
  const { look } = options;
  const { t } = look;
  return page({
    title: t.allowAccess,
    look,
    body: html`<h1>${t.allowClient(options.clientName)}</h1>
<p>${t.consentAsks(options.username, options.clientName)}</p>
<ul class="scopes">${options.scopes.map((scope) => html`<li>${describeScope(t, scope)}</li>`)}</ul>
${targetList(t, options.targets)}
<form method="post" action="${options.action}">
<input type="hidden" name="interaction" value="${options.interactionId}">
<input type="hidden" name="csrf" value="${options.csrfToken}">
<button type="submit" name="decision" value="allow">${t.allow}</button>
<button type="submit" name="decision" value="deny" class="secondary">${t.deny}</button>
</form>
<p class="muted">${t.remembered}</p>`,
  });
}
