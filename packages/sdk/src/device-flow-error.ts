import { IdgateSdkError } from './errors.js';

/**
 * Why a device authorization grant (RFC 8628 §3.5) ended without tokens: the person denied the
 * request (`access_denied`) or did not approve it before the device code expired (`expired_token`).
 * A closed union to `switch` on.
 * @example const reason: DeviceFlowErrorCode = 'expired_token';
 */
export type DeviceFlowErrorCode = 'access_denied' | 'expired_token';

/**
 * The device authorization grant ended without tokens (see {@link DeviceFlowErrorCode}). Thrown by
 * `pollDeviceAuthorization`; other failures of the token endpoint stay `IdgateHttpError`s.
 * @example
 * try {
 *   await client.pollDeviceAuthorization(device);
 * } catch (error) {
 *   if (error instanceof IdgateDeviceFlowError && error.error === 'expired_token') console.error('too late: try again');
 * }
 */
export class IdgateDeviceFlowError extends IdgateSdkError {
  /** `access_denied` or `expired_token`. */
  readonly error: DeviceFlowErrorCode;

  constructor(message: string, details: { error: DeviceFlowErrorCode; cause?: unknown }) {
    super(message, 'cause' in details ? { cause: details.cause } : {});
    this.name = 'IdgateDeviceFlowError';
    this.error = details.error;
  }
}
