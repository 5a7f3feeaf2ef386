import { describe, expect, it } from 'vitest';
import {
  DeviceAuthorizationResponse,
  DeviceCodeGrantRequest,
  ExecCredential,
  ExecCredentialRequest,
  TokenRequest,
} from '../src/index.js';

describe('device authorization grant shapes (RFC 8628)', () => {
  it('parses a §3.2 response and refuses one without a verification URI', () => {
    const response = {
      device_code: 'GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS',
      user_code: 'WDJB-MJHT',
      verification_uri: 'https://id.example/oauth/device',
      verification_uri_complete: 'https://id.example/oauth/device?user_code=WDJB-MJHT',
      expires_in: 1800,
      interval: 5,
    };
    expect(DeviceAuthorizationResponse.parse(response)).toEqual(response);
    const { verification_uri: _v, ...incomplete } = response;
    expect(DeviceAuthorizationResponse.safeParse(incomplete).success).toBe(false);
  });

  it('routes a device_code poll by its grant type', () => {
    const poll = {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: 'd',
      client_id: 'k',
    };
    expect(TokenRequest.parse(poll)).toEqual(DeviceCodeGrantRequest.parse(poll));
    expect(DeviceCodeGrantRequest.safeParse({ ...poll, device_code: '' }).success).toBe(false);
  });
});

describe('exec credential shapes (client.authentication.k8s.io)', () => {
  it('reads KUBERNETES_EXEC_INFO of both versions and refuses another kind', () => {
    for (const apiVersion of ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']) {
      expect(
        ExecCredentialRequest.parse({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } }),
      ).toMatchObject({ apiVersion, spec: { interactive: false } });
    }
    expect(
      ExecCredentialRequest.safeParse({
        apiVersion: 'client.authentication.k8s.io/v1alpha1',
        kind: 'ExecCredential',
      }).success,
    ).toBe(false);
  });

  it('answers a token with an RFC 3339 expiry and nothing else', () => {
    const answer = {
      apiVersion: 'client.authentication.k8s.io/v1beta1' as const,
      kind: 'ExecCredential' as const,
      status: { token: 'eyJ.a.b', expirationTimestamp: '2026-11-23T12:00:00Z' },
    };
    expect(ExecCredential.parse(answer)).toEqual(answer);
    expect(ExecCredential.safeParse({ ...answer, status: { token: '' } }).success).toBe(false);
  });
});
