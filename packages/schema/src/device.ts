import * as z from 'zod/mini';
import { checked } from './checked.js';

/**
 * Device authorization request (RFC 8628 §3.1), form-encoded to the device authorization endpoint.
 * Public clients send only `client_id`; confidential ones authenticate as at the token endpoint.
 * @example DeviceAuthorizationRequest.parse({ client_id: 'kubectl', scope: 'openid groups offline_access' })
 */
export const DeviceAuthorizationRequest = z.object({
  client_id: z.optional(checked(z.string(), z.minLength(1), z.maxLength(256))),
  client_secret: z.optional(checked(z.string(), z.minLength(1), z.maxLength(1024))),
  scope: z.optional(checked(z.string(), z.maxLength(2048))),
  /** RFC 8707: the audience (a cluster) the first access token is for. */
  resource: z.optional(
    z.union([
      checked(z.string(), z.maxLength(2048)),
      checked(z.array(checked(z.string(), z.maxLength(2048))), z.maxLength(16)),
    ]),
  ),
});
export type DeviceAuthorizationRequest = z.infer<typeof DeviceAuthorizationRequest>;

/**
 * Device authorization response (RFC 8628 §3.2): what the device shows the person and how it polls.
 * @example
 * DeviceAuthorizationResponse.parse({
 *   device_code: 'GmRh…', user_code: 'WDJB-MJHT', verification_uri: 'https://id.example/oauth/device',
 *   verification_uri_complete: 'https://id.example/oauth/device?user_code=WDJB-MJHT', expires_in: 600, interval: 5,
 * });
 */
export const DeviceAuthorizationResponse = z.looseObject({
  device_code: checked(z.string(), z.minLength(1)),
  user_code: checked(z.string(), z.minLength(1)),
  verification_uri: z.url(),
  verification_uri_complete: z.optional(z.url()),
  expires_in: checked(z.int32(), z.positive()),
  /** Seconds to wait between polls; 5 when absent (RFC 8628 §3.2). */
  interval: z.optional(checked(z.int32(), z.positive())),
});
export type DeviceAuthorizationResponse = z.infer<typeof DeviceAuthorizationResponse>;
