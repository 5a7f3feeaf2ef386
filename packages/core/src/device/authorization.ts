import {
  DEVICE_CODE_GRANT_TYPE,
  DeviceAuthorizationRequest,
  type DeviceAuthorizationResponse,
  describeFirstIssue,
  type FormValues,
} from '@idgate/schema';
import { authenticateClient } from '../clients/authenticate.js';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import type { DeviceAuthorizationRepository } from '../ports/oidc-storage.js';
import type { Clock, Random } from '../ports/runtime.js';
import { StorageConflictError } from '../ports/storage.js';
import { approvedResources, grantedScope, parseScope } from '../scopes.js';
import { generateSecret, hashSecret } from '../secrets.js';
import { formatUserCode, generateUserCode } from './user-code.js';

/** RFC 8628 §3.2 suggests 5 s between polls when the server says nothing else. */
export const DEFAULT_DEVICE_POLL_INTERVAL_SECONDS = 5;
/** How long a device code and its user code live by default: 10 minutes. */
export const DEFAULT_DEVICE_CODE_TTL_SECONDS = 600;

/** What the device authorization endpoint needs. */
export interface DeviceAuthorizationContext {
  clock: Clock;
  /** Where device and user codes come from; by default Web Crypto's CSPRNG. */
  random?: Random;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  storage: { deviceAuthorizations: DeviceAuthorizationRepository };
  /** The verification page, `{issuer}/device`. */
  verificationUri: string;
  /** Lifetime of a device code, seconds (default 600). */
  lifetimeSeconds?: number;
  /** Seconds between polls (default 5). */
  intervalSeconds?: number;
}

// RFC 8707 §2 lets `resource` repeat; RFC 6749 §3.1 forbids repeating anything else.
function parseRequest(form: FormValues): DeviceAuthorizationRequest {
  const fields: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(form)) {
    if (value === undefined || value === '') continue;
    if (Array.isArray(value) && name !== 'resource') {
      throw new OAuthProtocolError('invalid_request', `parameter ${name} must not be repeated`);
    }
    fields[name] = value;
  }
  const parsed = DeviceAuthorizationRequest.safeParse(fields);
  if (!parsed.success) {
    const description = describeFirstIssue(parsed.error, {
      input: fields,
      label: (path) => path || 'request',
      terse: true,
    });
    throw new OAuthProtocolError('invalid_request', description);
  }
  return parsed.data;
}

/**
 * The device authorization endpoint (RFC 8628 §3.1–3.2): authenticates the client as the token
 * endpoint does (a public client sends only `client_id`), checks that it may use the device_code
 * grant, its scope and its `resource` (RFC 8707), and stores a new request under the hash of an
 * opaque device code, with a user code of 8 consonants unique among live requests.
 * @throws OAuthProtocolError invalid_client, unauthorized_client, invalid_scope, invalid_target, invalid_request.
 * @example
 * const response = await startDeviceAuthorization(form, request.headers.authorization, context);
 * // { device_code, user_code: 'BCDF-GHJK', verification_uri, verification_uri_complete, expires_in: 600, interval: 5 }
 */
export async function startDeviceAuthorization(
  form: FormValues,
  authorization: string | undefined,
  context: DeviceAuthorizationContext,
): Promise<DeviceAuthorizationResponse> {
  const request = parseRequest(form);
  const { client } = await authenticateClient(
    { authorization, clientId: request.client_id, clientSecret: request.client_secret },
    (id) => context.findClient(id),
    new Date(context.clock.now()),
  );
  if (!client.grantTypes.includes(DEVICE_CODE_GRANT_TYPE)) {
    throw new OAuthProtocolError('unauthorized_client', 'this client may not use the device_code grant');
  }
  const scope = grantedScope(parseScope(request.scope), client.scopes);
  // What the confirmation page will name and the grant will cover: fixed now, so a cluster added
  // while the person decides is neither shown nor reachable.
  const resource = approvedResources(request.resource, client);
  const lifetime = context.lifetimeSeconds ?? DEFAULT_DEVICE_CODE_TTL_SECONDS;
  const interval = context.intervalSeconds ?? DEFAULT_DEVICE_POLL_INTERVAL_SECONDS;
  const deviceCode = generateSecret(context.random);
  const deviceCodeHash = await hashSecret(deviceCode);
  const now = context.clock.now();
  // 20^8 user codes: a collision with a live one is rare, several in a row means something is wrong.
  for (let attempt = 0; ; attempt++) {
    const userCode = generateUserCode(context.random);
    try {
      await context.storage.deviceAuthorizations.create({
        deviceCodeHash,
        userCode,
        clientId: client.clientId,
        scope,
        resource,
        status: 'pending',
        userId: null,
        authTime: null,
        sessionId: null,
        createdAt: new Date(now),
        expiresAt: new Date(now + lifetime * 1000),
        lastPolledAt: null,
        interval,
        consumedAt: null,
      });
      const shown = formatUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: context.verificationUri,
        verification_uri_complete: `${context.verificationUri}?user_code=${shown}`,
        expires_in: lifetime,
        interval,
      };
    } catch (error) {
      if (!(error instanceof StorageConflictError) || error.field !== 'userCode' || attempt >= 4) throw error;
    }
  }
}
