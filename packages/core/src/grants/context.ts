import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord } from '../model.js';
import type { Clock } from '../ports/runtime.js';
import type { PasswordLoginContext } from '../users/authenticate.js';

/** What the token endpoint's grant handlers need. */
export interface TokenEndpointContext {
  issuer: string;
  keys: KeyRing;
  clock: Clock;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  passwords: PasswordLoginContext;
  /** ID token lifetime in seconds (default 3600). */
  idTokenLifetimeSeconds?: number;
  /** A new grant id; defaults to a random UUID. */
  newGrantId?: () => string;
}
