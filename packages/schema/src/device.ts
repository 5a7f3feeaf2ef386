import * as z from 'zod/mini';
import { checked } from './checked.js';

/**
 * Device authorization request (RFC 8628 §3.1), form-encoded to the device authorization endpoint.
 * Public clients send only `client_id`; confidential ones authenticate as at the token endpoint.
 * @example DeviceAuthorizationRequest.parse({ client_id: 'kubectl', scope: 'openid groups offline_access' })
 */
export const DeviceAuthorizationRequest = /* @__PURE__ */ z.object({
  client_id: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(256),
    ),
  ),
  client_secret: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(1024),
    ),
  ),
  scope: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
  ),
  /** RFC 8707: the audience (a cluster) the first access token is for. */
  resource: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.union([
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.array(
          /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
        ),
        /* @__PURE__ */ z.maxLength(16),
      ),
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
export const DeviceAuthorizationResponse = /* @__PURE__ */ z.looseObject({
  device_code: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  user_code: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  verification_uri: /* @__PURE__ */ z.url(),
  verification_uri_complete: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.url()),
  expires_in: /* @__PURE__ */ checked(/* @__PURE__ */ z.int32(), /* @__PURE__ */ z.positive()),
  /** Seconds to wait between polls; 5 when absent (RFC 8628 §3.2). */
  interval: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.int32(), /* @__PURE__ */ z.positive()),
  ),
});
export type DeviceAuthorizationResponse = z.infer<typeof DeviceAuthorizationResponse>;
