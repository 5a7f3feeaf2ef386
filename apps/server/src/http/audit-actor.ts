import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuditActor } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';

// The admin use cases read their actor through a port (`auditActor()`) rather than a parameter,
// so the one set of admin ports serves every request: each request carries its own actor here.
const actors = new AsyncLocalStorage<{ actor?: AuditActor }>();

/** The actor of the admin request in hand, if any: what the server's admin ports answer. */
export function currentAuditActor(): AuditActor | undefined {
  return actors.getStore()?.actor;
}

/**
 * Gives every request of `app`'s scope its own actor slot, so {@link setAuditActor} in a later
 * hook is seen by the handler and the use cases it calls. Register before the hook that sets it.
 */
export function trackAuditActor(app: FastifyInstance): void {
  // Callback style: the rest of the request runs inside `run`, as @fastify/request-context does.
  app.addHook('onRequest', (_request, _reply, done) => actors.run({}, done));
}

/** Names the actor of the request in hand (an API key, once authenticated). */
export function setAuditActor(actor: AuditActor): void {
  const store = actors.getStore();
  if (store !== undefined) store.actor = actor;
}

/** The actor of every change the CLI makes on the database. */
export const CLI_ACTOR: AuditActor = { kind: 'cli', id: null };
