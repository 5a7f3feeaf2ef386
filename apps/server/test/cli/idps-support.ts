import { openProviderConfig } from '@idgate/core/admin';
import { openTestServices, SECRET } from './support.js';

// Shared by the `idgate idps` tests.

export const CLIENT_SECRET = 'gh-client-secret-5f4dcc3b5aa765d61d8327deb882cf99';
export const BIND_PASSWORD = 'ldap-bind-password-e99a18c428cb38d5f260853678922e03';
export const GITHUB = ['idps', 'add', '--name', 'github', '--type', 'github', '--client-id', 'Iv1.abc'];

/** The raw identity_providers rows and what the CLI's configured secret opens them into. */
export async function stored(url: string) {
  const services = await openTestServices(url);
  try {
    const rows = await services.database.db.selectFrom('identity_providers').selectAll().execute();
    const records = await services.storage.identityProviders.list();
    const configs = await Promise.all(records.map((record) => openProviderConfig(record, SECRET)));
    return { rows, records, configs };
  } finally {
    await services.close();
  }
}
