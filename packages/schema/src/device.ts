import { z } from 'zod';

/**
 * Device authorization request (RFC 8628 §3.1), form-encoded to the device authorization endpoint.
 * Public clients send only `client_id`; confidential ones authenticate as at the token endpoint.
 * @example DeviceAuthorizationRequest.parse({ client_id: 'kubectl', scope: 'openid groups offline_access' })
 */
export const DeviceAuthorizationRequest = z.object({
  client_id: z.string().min(1).max(256).optional(),
  client_secret: z.string().min(1).max(1024).optional(),
  scope: z.string().max(2048).optional(),
  /** RFC 8707: the audience (a cluster) the first access token is for. */
  resource: z.union([z.string().max(2048), z.array(z.string().max(2048)).max(16)]).optional(),
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
  device_code: z.string().min(1),
  user_code: z.string().min(1),
  verification_uri: z.url(),
  verification_uri_complete: z.url().optional(),
  expires_in: z.int32().positive(),
  /** Seconds to wait between polls; 5 when absent (RFC 8628 §3.2). */
  interval: z.int32().positive().optional(),
});
export type DeviceAuthorizationResponse = z.infer<typeof DeviceAuthorizationResponse>;
