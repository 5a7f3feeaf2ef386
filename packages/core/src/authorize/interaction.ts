import type { GrantUpstream } from '../model.js';
import type { AuthorizationRequest } from './request.js';

/** A sign-in on the login page with no application behind it. */
export interface StandaloneSignIn {
  standalone: true;
}

/**
 * A device approval (RFC 8628) waiting for the person to sign in and confirm: the device
 * authorization by its device code hash (a user code may be reissued once it expires; the hash
 * is never), and its client, for the login page to name.
 */
export interface DeviceApprovalRequest {
  device: { deviceCodeHash: string };
  clientId: string;
  /**
   * `[urn:idgate:acr:mfa]` when the device asked for a cluster that requires a second factor:
   * the approver signs in with one, as `acr_values` asks of an authorization request.
   */
  acrValues?: string[];
}

/**
 * What a browser interaction carries on to after sign-in: an authorization request, a device
 * approval or a standalone sign-in. Stored as JSON with the interaction.
 */
export type InteractionRequest = AuthorizationRequest | StandaloneSignIn | DeviceApprovalRequest;

/** Whether `request` is a standalone sign-in. */
export function isStandalone(request: InteractionRequest): request is StandaloneSignIn {
  return 'standalone' in request;
}

/** Whether `request` is a device approval. */
export function isDeviceApproval(request: InteractionRequest): request is DeviceApprovalRequest {
  return 'device' in request;
}

/**
 * An authorization request waiting for the user (login, consent), bound to one browser by a
 * cookie whose secret is stored as a hash.
 */
export interface InteractionRecord {
  id: string;
  secretHash: string;
  /** What the interaction carries on to after sign-in (JSON-safe values). */
  request: InteractionRequest;
  /** The user once signed in during this interaction. */
  userId: string | null;
  authTime: Date | null;
  /** How the user signed in during this interaction (RFC 8176); absent or null before. */
  amr?: string[] | null;
  /**
   * A user whose password was right and who owes a second factor (or its enrolment) before the
   * interaction goes on; absent or null when none does.
   */
  pendingUserId?: string | null;
  /**
   * The external identity (an LDAP directory's) the pending user's password was checked at, for
   * the session the second factor opens; absent or null for none.
   */
  pendingUpstream?: GrantUpstream | null;
  /** Anti-CSRF token the interaction's forms must echo. */
  /** SHA-256 of the CSRF token its forms carry (derived from the cookie secret, never stored). */
  csrfTokenHash: string;
  createdAt: Date;
  expiresAt: Date;
}
