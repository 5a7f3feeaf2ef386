import { sealProviderConfig } from '@idgate/core';
import { IdentityProviderConfig, type IdentityProviderConfigInput } from '@idgate/schema';
import type { TestServer } from './server.js';

/** Stores an identity provider in the test server's database, as `idgate idps add` would. */
export async function addIdentityProvider(t: TestServer, input: IdentityProviderConfigInput): Promise<void> {
  const config = IdentityProviderConfig.parse(input);
  const { storage, keyPolicy } = t.server.services;
  const now = new Date();
  await storage.identityProviders.create({
    name: config.name,
    type: config.type,
    config: await sealProviderConfig(config, keyPolicy.secret),
    disabled: config.disabled,
    createdAt: now,
    updatedAt: now,
  });
}
