import {
  type DeviceAuthorizationResponse,
  IdgateDeviceFlowError,
  IdgateHttpError,
  type NativeClient,
} from '@idgate/sdk';
import { describe, expect, it } from 'vitest';
import { issuerError } from '../src/get-token.js';
import { deviceSignIn } from '../src/sign-in.js';

const device: DeviceAuthorizationResponse = {
  device_code: 'dc',
  user_code: 'BCDF-GHJK',
  verification_uri: 'https://id.example.com/device',
  verification_uri_complete: 'https://id.example.com/device?user_code=BCDF-GHJK',
  expires_in: 600,
};
/** A client whose poll ends with `error`: only the one function under test runs for real. */
const clientFailingWith = (error: Error) =>
  ({
    metadata: { issuer: 'https://id.example.com' },
    requestDeviceAuthorization: async () => device,
    pollDeviceAuthorization: async () => {
      throw error;
    },
  }) as unknown as NativeClient;

describe('device sign-in failures, as the person reads them', () => {
  it('an expired code says to run the command again', async () => {
    const lines: string[] = [];
    await expect(
      deviceSignIn(clientFailingWith(new IdgateDeviceFlowError('x', { error: 'expired_token' })), {
        audience: 'kubernetes:a',
        resources: ['kubernetes:a'],
        log: (line) => lines.push(line),
      }),
    ).rejects.toThrow(
      'the code expired before the sign-in was approved (expired_token): run the command again',
    );
    expect(lines.join('\n')).toContain('https://id.example.com/device?user_code=BCDF-GHJK');
    expect(lines.join('\n')).toContain('BCDF-GHJK');
  });

  it('a denial says so', async () => {
    await expect(
      deviceSignIn(clientFailingWith(new IdgateDeviceFlowError('x', { error: 'access_denied' })), {
        audience: 'kubernetes:a',
        resources: ['kubernetes:a'],
        log: () => undefined,
      }),
    ).rejects.toThrow('the sign-in was denied (access_denied)');
  });
});

describe('issuer errors', () => {
  it('quote the SDK message, in which the request tokens are already redacted', () => {
    const error = new IdgateHttpError('POST /token failed with 400: invalid_grant ([redacted] is spent)', {
      endpoint: 'POST /token',
      status: 400,
      body: { error: 'invalid_grant', error_description: 'rt-secret is spent' },
      headers: new Headers(),
      oauthError: { error: 'invalid_grant', error_description: 'rt-secret is spent' },
    });
    const message = issuerError('https://id.example.com', error).message;
    expect(message).toBe('https://id.example.com refused the request: invalid_grant ([redacted] is spent)');
    expect(message).not.toContain('rt-secret');
  });
});
