import { Client, type ClientOptions, type SearchResult } from 'ldapts';
import type { LdapClient } from '../../src/connectors/ldap.js';

export interface RecordedClient {
  options: ClientOptions;
  binds: string[];
  searches: SearchResult[];
  unbound: boolean;
}

/** A clientFactory around real ldapts clients that records what the connector did with them. */
export function recordingFactory(): {
  factory: (options: ClientOptions) => LdapClient;
  clients: RecordedClient[];
} {
  const clients: RecordedClient[] = [];
  const factory = (options: ClientOptions): LdapClient => {
    const client = new Client(options);
    const record: RecordedClient = { options, binds: [], searches: [], unbound: false };
    clients.push(record);
    return {
      bind: (dn, password, controls) => {
        record.binds.push(String(dn));
        return client.bind(dn, password, controls);
      },
      search: async (baseDn, searchOptions, controls) => {
        const result = await client.search(baseDn, searchOptions, controls);
        record.searches.push(result);
        return result;
      },
      startTLS: (tlsOptions, controls) => client.startTLS(tlsOptions, controls),
      unbind: () => {
        record.unbound = true;
        return client.unbind();
      },
    };
  };
  return { factory, clients };
}
