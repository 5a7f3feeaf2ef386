import { describe, expect, it } from 'vitest';
import { execCredential, readExecInfo } from '../src/exec-credential.js';

describe('KUBERNETES_EXEC_INFO and the ExecCredential answer', () => {
  it('answers v1beta1 when kubectl says nothing (the plugin run by hand)', () => {
    expect(readExecInfo(undefined)).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      interactive: undefined,
    });
  });

  it('reads the apiVersion and spec.interactive', () => {
    const info = readExecInfo(
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        spec: { interactive: false },
      }),
    );
    expect(info).toEqual({ apiVersion: 'client.authentication.k8s.io/v1', interactive: false });
    // kubectl 1.20 sends an empty spec
    expect(
      readExecInfo('{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{}}'),
    ).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      interactive: undefined,
    });
  });

  it('refuses a version it does not speak', () => {
    expect(() =>
      readExecInfo(
        JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1alpha1', kind: 'ExecCredential' }),
      ),
    ).toThrow(/^KUBERNETES_EXEC_INFO is not an ExecCredential request: apiVersion must be/);
    expect(() => readExecInfo('nope')).toThrow('KUBERNETES_EXEC_INFO is not JSON');
  });

  it('writes the expiry as RFC 3339 in whole seconds', () => {
    expect(
      execCredential('client.authentication.k8s.io/v1', 'tok', Date.parse('2026-11-23T12:00:00.750Z')),
    ).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'tok', expirationTimestamp: '2026-11-23T12:00:00Z' },
    });
  });
});
