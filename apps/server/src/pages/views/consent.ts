import { type Html, html, page } from './html.js';

/** What each scope lets an application do, in the words the consent pages use. */
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  openid: 'Know who you are (your user id)',
  profile: 'See your username and name',
  email: 'See your email address',
  groups: 'See the groups you belong to',
  offline_access: 'Stay signed in and act for you while you are away',
};

/** One line of a consent page for `scope`. */
export function describeScope(scope: string): string {
  return SCOPE_DESCRIPTIONS[scope] ?? `Use the “${scope}” permission`;
}

/** Where a grant's tokens will be accepted, as the consent and device pages name it. */
export interface ResourceTarget {
  /** What kind of thing it is: "Cluster" for a registered cluster's audience, else "Audience". */
  label: string;
  name: string;
}

/** The list of every cluster (and other audience) a grant will reach, or nothing when there is none. */
export function targetList(targets: readonly ResourceTarget[]): Html | undefined {
  if (targets.length === 0) return undefined;
  return html`<p>Its tokens will be for:</p><ul class="scopes targets">${targets.map((t) => html`<li>${t.label}: <strong>${t.name}</strong></li>`)}</ul>`;
}

/** What a page asking the signed-in user to allow or deny an application shows and posts. */
export interface DecisionPageOptions {
  assetsPath: string;
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
  return page({
    title: 'Allow access',
    assetsPath: options.assetsPath,
    body: html`<h1>Allow ${options.clientName}?</h1>
<p>Signed in as <strong>${options.username}</strong>. <strong>${options.clientName}</strong> asks to:</p>
<ul class="scopes">${options.scopes.map((scope) => html`<li>${describeScope(scope)}</li>`)}</ul>
${targetList(options.targets)}
<form method="post" action="${options.action}">
<input type="hidden" name="interaction" value="${options.interactionId}">
<input type="hidden" name="csrf" value="${options.csrfToken}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p class="muted">Your choice is remembered for this application.</p>`,
  });
}
