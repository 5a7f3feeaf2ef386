import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import {
  ConnectorError,
  type ExternalIdentity,
  type PasswordConnector,
  type UpstreamRecheck,
} from '@idgate/core';
import type { LdapProviderConfig } from '@idgate/schema';
import type { Client, ClientOptions, Entry } from 'ldapts';

/** The part of an ldapts `Client` the connector uses. */
export type LdapClient = Pick<Client, 'bind' | 'search' | 'startTLS' | 'unbind'>;

export interface LdapConnectorOptions {
  /** Makes the LDAP clients (tests, tracing); defaults to ldapts' `Client`. */
  clientFactory?: (options: ClientOptions) => LdapClient | Promise<LdapClient>;
}

type Ldapts = typeof import('ldapts');

/**
 * ldapts, loaded at the first connection to a directory: a server without an LDAP provider never
 * loads it (the module cache makes every later call a resolved promise).
 */
export const loadLdapts = (): Promise<Ldapts> => import('ldapts');

/** Usernames longer than this are refused without asking the directory. */
const MAX_USERNAME_LENGTH = 256;

/**
 * Escapes a value for an LDAP search filter (RFC 4515 §3): `*`, `(`, `)`, `\`, NUL and the other
 * ASCII control characters become `\XX`. Other characters, non-ASCII included, stay as they are:
 * RFC 4515 allows UTF-8 in values, and ldapts' filter parser turns every `\XX` into one Latin-1
 * character, so escaped UTF-8 bytes would reach the directory garbled.
 * @example escapeFilterValue('Parens R Us (for all your parenthetical needs)') // 'Parens R Us \\28for all your parenthetical needs\\29'
 */
export function escapeFilterValue(value: string): string {
  return value.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: RFC 4515 escapes control characters
    /[*()\\\x00-\x1f\x7f]/g,
    (char) => `\\${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/**
 * An LDAP directory as a password connector: finds the user with a search (as the configured
 * service account or anonymously), checks the password with a bind as the user's DN, then
 * collects group names. Every call opens its own connections and closes them again.
 * @example const connector = createLdapConnector(LdapProviderConfig.parse(config)); await connector.authenticate('alice', 'secret');
 */
export function createLdapConnector(
  config: LdapProviderConfig,
  options: LdapConnectorOptions = {},
): PasswordConnector {
  // Set by the first open(): every ldapts error a call can meet comes after it.
  let ldap: Ldapts | undefined;
  const url = new URL(config.url);
  const secure = url.protocol === 'ldaps:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const tlsOptions: ConnectionOptions = {
    host,
    ...(isIP(host) === 0 ? { servername: host } : {}),
    ...(config.caCertificate !== undefined ? { ca: config.caCertificate } : {}),
  };
  const { userSearch, groupSearch } = config;

  /** A connected client, TLS established when configured; closed again when this fails. */
  async function open(): Promise<LdapClient> {
    const lib = await loadLdapts();
    ldap = lib;
    const clientOptions: ClientOptions = {
      url: config.url,
      connectTimeout: config.timeoutMs,
      timeout: config.timeoutMs,
      // ldapts connects with TLS whenever tlsOptions are given, so only for ldaps://.
      ...(secure ? { tlsOptions } : {}),
    };
    const client =
      options.clientFactory === undefined
        ? new lib.Client(clientOptions)
        : await options.clientFactory(clientOptions);
    try {
      if (config.startTls && !secure) {
        // The handshake after the StartTLS response has no timeout of its own in ldapts.
        await withTimeout(client.startTLS({ ...tlsOptions }), config.timeoutMs);
      }
      return client;
    } catch (error) {
      await close(client);
      // Never carry on in plaintext: a refused StartTLS is as bad as no answer.
      if (error instanceof lib.ResultCodeError) {
        throw new ConnectorError('upstream_unavailable', 'the directory refused StartTLS', { cause: error });
      }
      throw failure(error, 'the directory refused StartTLS', lib);
    }
  }

  async function searchUsers(client: LdapClient, username: string): Promise<Entry[]> {
    const attributes = [
      userSearch.usernameAttribute,
      userSearch.emailAttribute,
      userSearch.nameAttribute,
      // Operational attributes such as entryUUID come back only when asked for by name.
      userSearch.idAttribute,
    ];
    const result = await client
      .search(userSearch.baseDn, {
        scope: userSearch.scope,
        filter: userSearch.filter.replaceAll('{username}', escapeFilterValue(username)),
        attributes,
        explicitBufferAttributes: [userSearch.idAttribute],
        // Two are enough to tell that the filter is ambiguous.
        sizeLimit: 2,
        derefAliases: 'never',
      })
      .catch((error: unknown) => {
        throw failure(error, 'the directory refused the user search', ldap);
      });
    return result.searchEntries;
  }

  /** Whether the password is the user's, by a bind as the DN on a connection of its own. */
  async function checkPassword(dn: string, password: string): Promise<boolean> {
    const client = await open();
    try {
      await client.bind(dn, password);
      return true;
    } catch (error) {
      if (ldap !== undefined && error instanceof ldap.InvalidCredentialsError) return false;
      throw failure(error, 'the directory could not check the password', ldap);
    } finally {
      await close(client);
    }
  }

  async function searchGroups(client: LdapClient, dn: string, username: string): Promise<string[]> {
    if (groupSearch === undefined) return [];
    const filter = groupSearch.filter
      .replaceAll('{dn}', escapeFilterValue(dn))
      .replaceAll('{username}', escapeFilterValue(username));
    const result = await client
      .search(groupSearch.baseDn, {
        scope: groupSearch.scope,
        filter,
        attributes: [groupSearch.nameAttribute],
        derefAliases: 'never',
      })
      .catch((error: unknown) => {
        throw failure(error, 'the directory refused the group search', ldap);
      });
    const names = result.searchEntries.flatMap((entry) => values(entry, groupSearch.nameAttribute));
    return [...new Set(names)].sort();
  }

  /** Binds as idgate's service account, when one is configured. */
  async function bindService(client: LdapClient): Promise<void> {
    if (config.bindDn !== undefined && config.bindPassword !== undefined) {
      await client.bind(config.bindDn, config.bindPassword).catch((error: unknown) => {
        throw failure(error, "the directory refused idgate's service account", ldap);
      });
    }
  }

  /** The identity of a found entry, its groups searched for. */
  async function identityOf(client: LdapClient, entry: Entry, username: string): Promise<ExternalIdentity> {
    const directoryUsername = values(entry, userSearch.usernameAttribute)[0] ?? username;
    return {
      subject: subjectOf(entry, userSearch.idAttribute),
      username: directoryUsername,
      email: values(entry, userSearch.emailAttribute)[0] ?? null,
      // A directory attribute is whatever was typed into it: nobody proved the user receives
      // mail there, so it must not link accounts by email.
      emailVerified: false,
      displayName: values(entry, userSearch.nameAttribute)[0] ?? null,
      groups: await searchGroups(client, entry.dn, directoryUsername),
      // What a re-check searches for again; no password is ever kept.
      upstreamState: JSON.stringify({ username: directoryUsername }),
    };
  }

  return {
    kind: 'password',

    /**
     * The user search again as the service account (no password: the person is not there), and
     * the group search. No entry, several, or one with another id means the directory no longer
     * knows the person (deleted, or the user search's filter now excludes them); any failure to
     * ask is `unavailable`, never `gone`.
     */
    async refresh({ subject, state }): Promise<UpstreamRecheck> {
      let username: unknown;
      try {
        username = (JSON.parse(state) as { username?: unknown } | null)?.username;
      } catch {
        username = undefined;
      }
      if (typeof username !== 'string' || username === '')
        return { status: 'unavailable', reason: 'no directory username was kept' };
      try {
        const client = await open();
        try {
          await bindService(client);
          const entries = await searchUsers(client, username);
          const entry = entries[0];
          if (entries.length !== 1 || entry === undefined || entry.dn === '')
            return {
              status: 'gone',
              reason: `no single entry under ${userSearch.baseDn} matches the user search`,
            };
          const identity = await identityOf(client, entry, username);
          if (identity.subject !== subject)
            return { status: 'gone', reason: 'the entry matching the user search has another id' };
          return { status: 'valid', identity };
        } finally {
          await close(client);
        }
      } catch (error) {
        return {
          status: 'unavailable',
          reason: failure(error, 'the directory refused the re-check', ldap).message,
        };
      }
    },

    async authenticate(username, password, { onRefusal = () => {} } = {}) {
      // An empty password makes the bind an unauthenticated one, which directories may accept as
      // anonymous (RFC 4513 §5.1.2): it would "succeed" for anyone's DN.
      if (username === '' || password === '' || username.length > MAX_USERNAME_LENGTH) return null;
      // Lone surrogates cannot be sent as UTF-8; no directory entry has them.
      if (Buffer.from(username, 'utf8').toString('utf8') !== username) return null;

      if (config.bindDn !== undefined && config.bindPassword === undefined) {
        // Binding with the DN and no password would be an unauthenticated bind: anonymous at best.
        throw new ConnectorError('upstream_error', "idgate's service account (bindDn) has no bindPassword");
      }

      const client = await open();
      try {
        await bindService(client);
        const entries = await searchUsers(client, username);
        const entry = entries[0];
        // Ambiguous: never pick one of several entries, or a password would sign in as someone else.
        if (entries.length !== 1 || entry === undefined || entry.dn === '') {
          onRefusal(
            entries.length === 0
              ? `no entry under ${userSearch.baseDn} matches the user search`
              : entries.length > 1
                ? `several entries under ${userSearch.baseDn} match the user search; refusing to pick one`
                : 'the matching entry has no DN',
          );
          return null;
        }
        if (!(await checkPassword(entry.dn, password))) {
          onRefusal(`the directory refused the password for ${entry.dn} (invalid credentials)`);
          return null;
        }

        return await identityOf(client, entry, username);
      } finally {
        await close(client);
      }
    },
  };
}

/** The entry's values of an attribute (names compare case-insensitively), as strings. */
function values(entry: Entry, attribute: string): string[] {
  const key = Object.keys(entry).find((name) => name.toLowerCase() === attribute.toLowerCase());
  if (key === undefined || key === 'dn') return [];
  const value = entry[key];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list
    .map((item) => (Buffer.isBuffer(item) ? item.toString('utf8') : item))
    .filter((item) => item !== '');
}

/** The id attribute's value (hex when it is binary, such as objectGUID), or else the DN. */
function subjectOf(entry: Entry, attribute: string): string {
  const key = Object.keys(entry).find((name) => name.toLowerCase() === attribute.toLowerCase());
  const raw = key === undefined || key === 'dn' ? undefined : entry[key];
  const first = Array.isArray(raw) ? raw[0] : raw;
  if (first === undefined || first.length === 0) return entry.dn;
  if (typeof first === 'string') return first;
  const text = first.toString('utf8');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters make a value binary
  const printable = Buffer.from(text, 'utf8').equals(first) && !/[\x00-\x1f\x7f\ufffd]/.test(text);
  return printable ? text : first.toString('hex');
}

/**
 * A ConnectorError for an ldapts failure: TLS and network failures, timeouts and the result
 * codes of a busy or unavailable server are `upstream_unavailable`; other LDAP results are
 * `upstream_error` with `message`. ldapts' errors never carry the bind password.
 */
function failure(error: unknown, message: string, ldap: Ldapts | undefined): ConnectorError {
  if (error instanceof ConnectorError) return error;
  if (isTlsError(error)) {
    return new ConnectorError(
      'upstream_unavailable',
      'could not establish a trusted TLS connection to the directory (check caCertificate and the host name)',
      { cause: error },
    );
  }
  if (ldap === undefined) {
    // ldapts did not even load: nothing reached the directory.
    return new ConnectorError('upstream_unavailable', 'the directory did not answer', { cause: error });
  }
  if (error instanceof ldap.BusyError || error instanceof ldap.UnavailableError) {
    return new ConnectorError('upstream_unavailable', 'the directory is unavailable', { cause: error });
  }
  if (error instanceof ldap.ResultCodeError) {
    return new ConnectorError('upstream_error', `${message} (LDAP result ${error.code})`, { cause: error });
  }
  return new ConnectorError('upstream_unavailable', 'the directory did not answer', { cause: error });
}

function isTlsError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return /CERT|SELF_SIGNED|ISSUER|TLS|SSL|ALTNAME|UNABLE_TO_VERIFY|HOSTNAME/.test(code);
}

async function close(client: LdapClient): Promise<void> {
  try {
    await client.unbind();
  } catch {
    // The connection is gone either way.
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
