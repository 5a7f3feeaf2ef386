import type {
  IdentityProvider,
  IdentityProviderConfigInput,
  IdentityProviderPatch,
  LinkedIdentity,
} from '@idgate/schema';

/**
 * Options of {@link IdgateFederationMethods.updateIdentityProvider}.
 * @example const options: UpdateIdentityProviderOptions = { ifMatch: provider.etag };
 */
export interface UpdateIdentityProviderOptions {
  /**
   * The `etag` of the provider as last read: the change is refused (412 `precondition_failed`)
   * when the provider changed since. Omit to change it whatever its version.
   */
  ifMatch?: string | undefined;
}

/**
 * The methods of {@link IdgateAdminClient} about identity federation: the admin API of identity
 * providers and of the identities linked through them (`/admin/v1`). Answers never carry a secret:
 * secret fields of a provider show as `"[set]"`, and a client secret or bind password sent is
 * redacted from every error message. Finishing an external sign-in is
 * {@link IdgateClient.callback}.
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'http://localhost:8080', apiKey: adminKey });
 * await admin.createIdentityProvider({ type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 's' });
 * const { items } = await admin.listIdentityProviders();
 */
export interface IdgateFederationMethods {
  /**
   * `GET /admin/v1/identity-providers`: those of the configuration file (`source: 'config'`,
   * read-only), then those of the database, by name.
   * @example const { items } = await admin.listIdentityProviders();
   */
  listIdentityProviders(): Promise<{ items: IdentityProvider[] }>;

  /**
   * `GET /admin/v1/identity-providers/{name}`; a 404 `IdgateHttpError` (problem code
   * `identity_provider_not_found`) when there is none.
   * @example const github = await admin.getIdentityProvider('github');
   */
  getIdentityProvider(name: string): Promise<IdentityProvider>;

  /**
   * `POST /admin/v1/identity-providers`: adds a provider to the database; its secrets are stored
   * sealed. The server validates `config`: a 400 `IdgateHttpError` (problem code
   * `invalid_identity_provider`) names the first bad field; a 409 (`identity_provider_exists`)
   * says the name is taken, in any case.
   * @example
   * const provider = await admin.createIdentityProvider({
   *   type: 'oidc',
   *   name: 'corp',
   *   issuer: 'https://sso.example.com',
   *   clientId: 'idgate',
   *   clientSecret: process.env.CORP_SECRET ?? '',
   * });
   */
  createIdentityProvider(config: IdentityProviderConfigInput): Promise<IdentityProvider>;

  /**
   * `POST /admin/v1/identity-providers/{name}/disable` (or `/enable`): stops (or resumes) offering
   * a provider for sign-in. A 409 (`identity_provider_read_only`) for a provider of the
   * configuration file.
   * @example await admin.setIdentityProviderDisabled('github', true);
   */
  setIdentityProviderDisabled(name: string, disabled: boolean): Promise<IdentityProvider>;

  /**
   * `PATCH /admin/v1/identity-providers/{name}`: changes a provider of the database with a JSON
   * merge patch (RFC 7396) of its configuration: fields given replace the stored ones, nested
   * objects (`claims`, `userSearch`, `groupSearch`) merge, `null` removes an optional field. A
   * `clientSecret` or `bindPassword` given is a rotation: stored sealed, never answered, redacted
   * from every error message. The name and type stay, so identities linked through the provider
   * keep signing in to the same users. The server checks the merged configuration as it checks a
   * new one: a 400 (`invalid_identity_provider`) names the first bad field; 404
   * (`identity_provider_not_found`); 409 (`identity_provider_read_only`) for a provider of the
   * configuration file; 412 (`precondition_failed`) when `ifMatch` is stale. Never retried.
   * @example
   * const corp = await admin.getIdentityProvider('corp');
   * await admin.updateIdentityProvider(
   *   'corp',
   *   { clientSecret: process.env.CORP_NEW_SECRET ?? '', scopes: ['openid', 'profile', 'email', 'groups'] },
   *   { ifMatch: corp.etag },
   * );
   */
  updateIdentityProvider(
    name: string,
    patch: IdentityProviderPatch,
    options?: UpdateIdentityProviderOptions,
  ): Promise<IdentityProvider>;

  /**
   * `DELETE /admin/v1/identity-providers/{name}`: deletes a provider of the database and unlinks
   * every identity linked through it. A 409 (`identity_provider_read_only`) for a provider of the
   * configuration file. Never retried.
   * @example await admin.deleteIdentityProvider('github');
   */
  deleteIdentityProvider(name: string): Promise<void>;

  /**
   * `GET /admin/v1/users/{username}/identities`: the external identities linked to a user; a 404
   * (`user_not_found`) when there is no such user.
   * @example const { items } = await admin.listUserIdentities('alice');
   */
  listUserIdentities(username: string): Promise<{ items: LinkedIdentity[] }>;
}
