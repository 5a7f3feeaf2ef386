import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without declarations
import { CLIENTS, README, withTables } from '../scripts/method-table.mjs';
import * as sdk from '../src/index.js';

/** The names of the methods and properties a client object answers (its own and its classes'). */
function membersOf(client: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = client; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) if (name !== 'constructor') names.add(name);
  }
  return [...names].sort();
}

/** The names in the README's table between `<!-- methods:NAME -->` and its end marker. */
function tabled(readme: string, name: string): string[] {
  const section = readme.slice(
    readme.indexOf(`<!-- methods:${name} -->`),
    readme.indexOf(`<!-- /methods:${name} -->`),
  );
  return [...section.matchAll(/^\| `(?:readonly )?(\w+)[(:<]/gm)].map((match) => match[1] as string).sort();
}

const metadata = {
  issuer: 'https://id.example.com/oauth',
  authorization_endpoint: 'https://id.example.com/oauth/authorize',
  token_endpoint: 'https://id.example.com/oauth/token',
  userinfo_endpoint: 'https://id.example.com/oauth/userinfo',
  jwks_uri: 'https://id.example.com/oauth/keys',
  scopes_supported: ['openid'],
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code'],
  subject_types_supported: ['public'],
  id_token_signing_alg_values_supported: ['RS256'],
  token_endpoint_auth_methods_supported: ['none'],
  claims_supported: ['sub'],
  code_challenge_methods_supported: ['S256'],
};

describe('the README reference (scripts/method-table.mjs)', () => {
  it('holds the method tables the sources make (run `pnpm --filter @idgate/sdk run readme` after a change)', async () => {
    const readme = await readFile(README, 'utf8');
    expect(withTables(readme)).toBe(readme);
  });

  it.each([
    ['IdgateClient', () => sdk.createIdgateClient({ baseUrl: 'https://id.example.com' })],
    [
      'IdgateAdminClient',
      () => sdk.createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: 'k' }),
    ],
    ['NativeClient', () => sdk.createNativeClient({ metadata, clientId: 'kubectl' })],
  ] as const)('names every public method of %s, and only those', async (name, create) => {
    expect(CLIENTS).toContain(name);
    const readme = await readFile(README, 'utf8');
    expect(tabled(readme, name)).toEqual(membersOf(create()));
  });

  it('names every function the package exports', async () => {
    const readme = await readFile(README, 'utf8');
    const functions = Object.entries(sdk)
      .filter(([, value]) => typeof value === 'function' && !/^class /.test(String(value)))
      .map(([key]) => key)
      .sort();
    expect(tabled(readme, 'functions')).toEqual(functions);
  });
});
