import { SigningKeyInfo } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestDatabase } from '../helpers/databases.js';
import { cliDatabaseUrls, envFor, runInProcess } from './support.js';

// The incident response commands on each database: `keys retire`, `not-before`,
// `blocked-addresses`, and a client's sessions and grants.

describe.each(cliDatabaseUrls())('idgate incident response commands on $name', (kind) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  const idgate = (...args: string[]) => runInProcess(args, { env });

  beforeAll(async () => {
    database = await kind.create();
    env = envFor(database.url, { IDGATE_KEY_ACTIVATION_DELAY: '0' });
  });
  afterAll(async () => database?.drop());

  it('keys retire refuses the only signing key, retires it with --rotate, and refuses an unknown kid', async () => {
    const [only] = z.array(SigningKeyInfo).parse(JSON.parse((await idgate('keys', 'list', '--json')).stdout));
    const refused = await idgate('keys', 'retire', only?.kid as string);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /is the only key that may sign: retire it with a new key made in the same step/,
    );

    const retired = await idgate('keys', 'retire', only?.kid as string, '--rotate', '--json');
    expect(retired.code).toBe(0);
    const printed = JSON.parse(retired.stdout) as { retired: SigningKeyInfo; created: SigningKeyInfo };
    expect([printed.retired.kid, printed.retired.state, printed.created.state]).toEqual([
      only?.kid,
      'expired',
      'active',
    ]);
    const unknown = await idgate('keys', 'retire', 'no-such-kid');
    expect([unknown.code, unknown.stderr]).toEqual([1, 'idgate: no signing key no-such-kid in JWKS\n']);
    const bad = await idgate('keys', 'retire', '../../x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/kid must be/);
  });

  it('not-before set takes one scope, refuses an instant far ahead, and lists what is in force', async () => {
    expect((await idgate('users', 'add', 'alice', '--json')).code).toBe(0);
    const none = await idgate('not-before', 'set');
    expect([none.code, none.stderr]).toEqual([
      1,
      'idgate: give exactly one of --all, --client ID, --user NAME\n',
    ]);
    const future = await idgate('not-before', 'set', '--all', '--before', '2999-01-01T00:00:00Z');
    expect(future.code).toBe(1);
    expect(future.stderr).toMatch(/must not be later than now/);
    const malformed = await idgate('not-before', 'set', '--all', '--before', 'tomorrow');
    expect(malformed.code).toBe(1);
    const nobody = await idgate('not-before', 'set', '--user', 'nobody');
    expect([nobody.code, nobody.stderr]).toEqual([1, 'idgate: no user nobody\n']);
    const set = await idgate('not-before', 'set', '--user', 'alice', '--json');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ scope: 'user', subject: expect.any(String) });
    const listed = JSON.parse((await idgate('not-before', 'list', '--json')).stdout) as unknown[];
    expect(listed).toHaveLength(1);
  });

  it('lists and lifts blocked addresses, and a client’s sessions and grants', async () => {
    expect(JSON.parse((await idgate('blocked-addresses', 'list', '--json')).stdout)).toEqual([]);
    expect(JSON.parse((await idgate('blocked-addresses', 'lift', '--all', '--json')).stdout)).toEqual({
      lifted: [],
    });
    const neither = await idgate('blocked-addresses', 'lift');
    expect([neither.code, neither.stderr]).toEqual([1, 'idgate: give an address, or --all\n']);
    const bad = await idgate('blocked-addresses', 'lift', 'not-an-address');
    expect(bad.code).toBe(1);

    const client = JSON.parse(
      (await idgate('clients', 'add', '--name', 'Web', '--grant', 'client_credentials', '--json')).stdout,
    ) as { clientId: string };
    expect(JSON.parse((await idgate('clients', 'grants', client.clientId, '--json')).stdout)).toEqual([]);
    expect(JSON.parse((await idgate('clients', 'sessions', client.clientId, '--json')).stdout)).toEqual([]);
    expect(
      JSON.parse((await idgate('clients', 'revoke-grants', client.clientId, '--all', '--json')).stdout),
    ).toEqual({
      revoked: 0,
    });
    expect(JSON.parse((await idgate('clients', 'end-sessions', client.clientId, '--json')).stdout)).toEqual({
      ended: 0,
      revokedGrants: 0,
    });
    const missing = await idgate('clients', 'grants', 'cl_nobody');
    expect([missing.code, missing.stderr]).toEqual([1, 'idgate: no client cl_nobody\n']);
  });
});
