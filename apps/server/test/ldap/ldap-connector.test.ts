import { ConnectorError } from '@idgate/core';
import { LdapProviderConfig } from '@idgate/schema';
import { Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLdapConnector } from '../../src/connectors/ldap.js';
import { GROUPS_DN, hasSlapd, PEOPLE_DN, type Slapd, startSlapd, userDn } from '../helpers/slapd.js';
import { recordingFactory } from './recording-client.js';

let slapd: Slapd;
let aliceUuid: string;

beforeAll(async () => {
  slapd = await startSlapd();
  const client = new Client({ url: slapd.url });
  try {
    await client.bind(slapd.managerDn, slapd.managerPassword);
    const { searchEntries } = await client.search(userDn('alice'), {
      scope: 'base',
      attributes: ['entryUUID'],
    });
    aliceUuid = String(searchEntries[0]?.entryUUID);
  } finally {
    await client.unbind();
  }
});

afterAll(async () => {
  await slapd?.stop();
});

function config(overrides: Record<string, unknown> = {}): LdapProviderConfig {
  return LdapProviderConfig.parse({
    type: 'ldap',
    name: 'corp-ldap',
    url: slapd.url,
    bindDn: slapd.managerDn,
    bindPassword: slapd.managerPassword,
    timeoutMs: 2_000,
    userSearch: { baseDn: PEOPLE_DN },
    groupSearch: { baseDn: GROUPS_DN },
    ...overrides,
  });
}

describe.skipIf(!hasSlapd)('LDAP connector against slapd', () => {
  it('signs alice in with her directory identity and sorted groups', async () => {
    const { factory, clients } = recordingFactory();
    const identity = await createLdapConnector(config(), { clientFactory: factory }).authenticate(
      'alice',
      'alice-pass',
    );
    expect(aliceUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(identity).toEqual({
      subject: aliceUuid,
      username: 'alice',
      email: 'alice@idgate.test',
      emailVerified: false,
      displayName: 'Alice Liddell',
      groups: ['admins', 'devs'],
      // What a refresh searches for again; never the password.
      upstreamState: JSON.stringify({ username: 'alice' }),
    });
    // A search connection (manager bind) and a fresh one for the user's bind, both closed.
    expect(clients.map((client) => client.binds)).toEqual([[slapd.managerDn], [userDn('alice')]]);
    expect(clients.every((client) => client.unbound)).toBe(true);
  });

  it('matches the username as the directory does (uid ignores case) and returns its spelling', async () => {
    const connector = createLdapConnector(config());
    for (const typed of ['ALICE', 'Alice']) {
      const identity = await connector.authenticate(typed, 'alice-pass');
      expect(identity).toMatchObject({ subject: aliceUuid, username: 'alice', groups: ['admins', 'devs'] });
    }
    // Passwords are not case-insensitive.
    expect(await connector.authenticate('alice', 'ALICE-PASS')).toBeNull();
  });

  it('answers null for a wrong password and for an unknown user, and closes every connection', async () => {
    const { factory, clients } = recordingFactory();
    const connector = createLdapConnector(config(), { clientFactory: factory });
    const reasons: string[] = [];
    const onRefusal = (reason: string) => reasons.push(reason);
    expect(await connector.authenticate('alice', 'bob-pass', { onRefusal })).toBeNull();
    expect(await connector.authenticate('nobody', 'alice-pass', { onRefusal })).toBeNull();
    // Told apart for the operator's log only, never with the password.
    expect(reasons).toEqual([
      `the directory refused the password for ${userDn('alice')} (invalid credentials)`,
      `no entry under ${PEOPLE_DN} matches the user search`,
    ]);
    expect(clients).toHaveLength(3);
    expect(clients.every((client) => client.unbound)).toBe(true);
  });

  it('refuses an empty password before asking slapd, which would accept it as an anonymous bind', async () => {
    // Proof the guard matters: slapd answers an unauthenticated bind of alice's DN with success.
    const raw = new Client({ url: slapd.url });
    try {
      await expect(raw.bind(userDn('alice'), '')).resolves.toBeUndefined();
    } finally {
      await raw.unbind();
    }
    const { factory, clients } = recordingFactory();
    const connector = createLdapConnector(config(), { clientFactory: factory });
    expect(await connector.authenticate('alice', '')).toBeNull();
    expect(await connector.authenticate('', 'alice-pass')).toBeNull();
    expect(clients).toHaveLength(0);
  });

  it.each(['*', 'alice)(uid=*', '*)(|(uid=*', 'al*', '*)', ')(uid=alice', 'star*', 'alice\\29'])(
    'finds nobody for the injection attempt %j',
    async (username) => {
      const { factory, clients } = recordingFactory();
      const connector = createLdapConnector(config(), { clientFactory: factory });
      for (const password of ['alice-pass', 'bob-pass', 'star-pass']) {
        expect(await connector.authenticate(username, password)).toBeNull();
      }
      // The search matched no entry at all, so no user bind was attempted.
      expect(clients.flatMap((client) => client.searches.flatMap((result) => result.searchEntries))).toEqual(
        [],
      );
      expect(clients.flatMap((client) => client.binds)).toEqual([
        slapd.managerDn,
        slapd.managerDn,
        slapd.managerDn,
      ]);
    },
  );

  it('signs in the user whose uid holds filter characters, by the exact name', async () => {
    const identity = await createLdapConnector(config()).authenticate('star*(user)', 'star-pass');
    // The group search escapes the DN, which holds the same characters.
    expect(identity).toMatchObject({ username: 'star*(user)', displayName: 'Star User', groups: ['devs'] });
  });

  it('signs in a non-ASCII username, sent as UTF-8', async () => {
    const identity = await createLdapConnector(config()).authenticate('zoë', 'zoë-pass');
    expect(identity).toMatchObject({ username: 'zoë', displayName: 'Zoë Ñandú', groups: [] });
    // Why escapeFilterValue leaves non-ASCII alone: ldapts decodes \XX to one Latin-1 character,
    // so the RFC's escaped UTF-8 form finds nothing.
    const raw = new Client({ url: slapd.url });
    try {
      const escaped = await raw.search(PEOPLE_DN, { filter: '(uid=zo\\c3\\ab)' });
      expect(escaped.searchEntries).toEqual([]);
    } finally {
      await raw.unbind();
    }
  });

  it('uses the configured id attribute, or the DN when the entry lacks it', async () => {
    const connector = createLdapConnector(
      config({ userSearch: { baseDn: PEOPLE_DN, idAttribute: 'employeeNumber' } }),
    );
    expect(await connector.authenticate('bob', 'bob-pass')).toMatchObject({
      subject: '1002',
      username: 'bob',
    });
    expect(await connector.authenticate('alice', 'alice-pass')).toMatchObject({ subject: userDn('alice') });
  });

  it('refuses an ambiguous search without binding as any of the entries', async () => {
    const { factory, clients } = recordingFactory();
    const connector = createLdapConnector(
      config({ userSearch: { baseDn: PEOPLE_DN, filter: '(mail={username})' } }),
      { clientFactory: factory },
    );
    const reasons: string[] = [];
    const onRefusal = (reason: string) => reasons.push(reason);
    expect(await connector.authenticate('team@idgate.test', 'carol-pass', { onRefusal })).toBeNull();
    expect(reasons).toEqual([
      `several entries under ${PEOPLE_DN} match the user search; refusing to pick one`,
    ]);
    expect(clients.flatMap((client) => client.binds)).toEqual([slapd.managerDn]);
    // The same filter with one match signs in.
    expect(await connector.authenticate('alice@idgate.test', 'alice-pass')).toMatchObject({
      username: 'alice',
    });
  });

  it('searches anonymously when no bindDn is configured', async () => {
    const { factory, clients } = recordingFactory();
    const connector = createLdapConnector(config({ bindDn: undefined, bindPassword: undefined }), {
      clientFactory: factory,
    });
    expect(await connector.authenticate('alice', 'alice-pass')).toMatchObject({
      subject: aliceUuid,
      groups: ['admins', 'devs'],
    });
    expect(clients.map((client) => client.binds)).toEqual([[], [userDn('alice')]]);
  });

  it("reports a refused service account as upstream_error, not as the user's wrong password", async () => {
    const { factory, clients } = recordingFactory();
    const connector = createLdapConnector(config({ bindPassword: 'not-the-manager-password' }), {
      clientFactory: factory,
    });
    const error = await connector.authenticate('alice', 'alice-pass').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error).toMatchObject({ failure: 'upstream_error' });
    expect((error as Error).message).toMatch(/refused idgate's service account/);
    expect((error as Error).message).not.toContain('not-the-manager-password');
    expect(clients.every((client) => client.unbound)).toBe(true);
  });

  it('refuses a service account DN without a password instead of binding unauthenticated', async () => {
    const connector = createLdapConnector(config({ bindPassword: undefined }));
    await expect(connector.authenticate('alice', 'alice-pass')).rejects.toMatchObject({
      name: 'ConnectorError',
      failure: 'upstream_error',
    });
  });

  it('reports a user search on a missing base DN as upstream_error', async () => {
    const connector = createLdapConnector(config({ userSearch: { baseDn: `ou=nowhere,${slapd.baseDn}` } }));
    await expect(connector.authenticate('alice', 'alice-pass')).rejects.toMatchObject({
      name: 'ConnectorError',
      failure: 'upstream_error',
    });
  });
});
