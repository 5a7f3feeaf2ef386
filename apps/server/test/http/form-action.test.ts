import { describe, expect, it } from 'vitest';
import { formActionSources } from '../../src/pages/form-action.js';

describe('formActionSources', () => {
  it('allows the origin of an https redirect, any port of a loopback one, and a private-use scheme', () => {
    expect(
      formActionSources([
        'https://app.example.com:8443/cb?x=1',
        'http://127.0.0.1:51234/callback',
        'http://[::1]/cb',
        'com.example.app:/oauth2redirect',
        undefined,
      ]),
    ).toEqual(['https://app.example.com:8443', 'http://127.0.0.1:*', 'http://[::1]:*', 'com.example.app:']);
  });

  it('gives nothing for plain http off loopback, or what does not parse', () => {
    expect(formActionSources(['http://app.example.com/cb', 'not a url', ''])).toEqual([]);
  });
});
