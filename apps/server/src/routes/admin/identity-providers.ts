import { type IdentityProviderRecord, StorageConflictError } from '@idgate/core';
import { IDENTITY_PROVIDER_SECRETS, type IdentityProvider, IdentityProviderConfig } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { linkedIdentityView } from '../../cli/views.js';
import { describeProvider, SECRET_PLACEHOLDER, toStoredConfig } from '../../federation/provider-store.js';
import { apiKeyAuthenticator } from '../../http/api-key-auth.js';
import { sendProblem } from '../../http/errors.js';

const BASE = '/admin/v1/identity-providers';
// What a stored name can be (lower-cased): anything else is unknown without asking the database.
const STORED_NAME = /^[a-z][a-z0-9-]{0,62}$/;

type Named = { Params: { name: string } };

/** The first issue of an invalid configuration, naming its field. */
function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'the body is not an identity provider configuration';
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => (path === '' ? key : `${path}.${key}`));
    return `${keys.join(', ')}: unknown field${keys.length > 1 ? 's' : ''}`;
  }
  if (issue.code === 'invalid_type' && issue.input === undefined && path !== '') return `${path} is required`;
  if (path === 'type') return 'type must be one of oidc, github, gitlab, ldap';
  return `${path || 'body'}: ${issue.message}`;
}

/**
 * A stored provider as listed, without opening its secrets: a sealed value only shows as set, so
 * a listing works even when a secret cannot be opened any more.
 * @throws Error when the stored configuration is not valid (answered as a 500, and logged).
 */
function describeStored(record: IdentityProviderRecord): IdentityProvider {
  const shown: Record<string, unknown> = { ...record.config };
  for (const field of IDENTITY_PROVIDER_SECRETS) {
    if (shown[field] !== undefined) shown[field] = SECRET_PLACEHOLDER;
  }
  const config = IdentityProviderConfig.safeParse({
    ...shown,
    name: record.name,
    type: record.type,
    disabled: record.disabled,
  });
  if (!config.success) throw new Error(`stored identity provider ${record.name} is not valid`);
  return describeProvider(config.data, 'database', record.createdAt);
}

/**
 * The admin REST API of identity providers, under `/admin/v1`: list, read, create, disable,
 * enable and delete providers, and list a user's linked identities. Every route needs an API key
 * with the `admin` scope; errors are RFC 9457 problems; nothing answered is ever cached, and no
 * answer ever carries a secret (secret fields show as `"[set]"`). Providers declared in the
 * configuration file are listed (source `config`) but read-only: they win a name clash.
 */
export async function adminIdentityProviderRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const { storage } = idgate;
  const authenticate = apiKeyAuthenticator(idgate, 'admin');
  const fromFile = new Map(idgate.config.identityProviders.map((config) => [config.name, config]));
  const root = idgate.config.issuer.slice(0, -'/oauth'.length);
  const now = () => new Date(idgate.clock.now());

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
    await authenticate(request);
  });

  const options = { config: { errorFormat: 'problem' as const } };
  const notFound = (reply: FastifyReply, name: string) =>
    sendProblem(
      reply,
      404,
      'identity_provider_not_found',
      `there is no identity provider ${name.slice(0, 64)}`,
    );
  const readOnly = (reply: FastifyReply, name: string) =>
    sendProblem(
      reply,
      409,
      'identity_provider_read_only',
      `identity provider ${name} is declared in the configuration file: change it there`,
    );
  /** The stored record called `name` (any case), when the name can be one. */
  const findStored = (name: string) =>
    STORED_NAME.test(name) ? storage.identityProviders.findByName(name) : Promise.resolve(undefined);

  app.get(BASE, options, async () => {
    const stored = await storage.identityProviders.list();
    return {
      items: [
        ...[...fromFile.values()].map((config) => describeProvider(config, 'config', null)),
        ...stored.filter((record) => !fromFile.has(record.name)).map(describeStored),
      ],
    };
  });

  app.get<Named>(`${BASE}/:name`, options, async (request, reply) => {
    const name = request.params.name.toLowerCase();
    const file = fromFile.get(name);
    if (file !== undefined) return describeProvider(file, 'config', null);
    const record = await findStored(name);
    return record === undefined ? notFound(reply, request.params.name) : describeStored(record);
  });

  app.post(BASE, options, async (request, reply) => {
    if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
      return sendProblem(
        reply,
        415,
        'unsupported_media_type',
        'an identity provider is sent as application/json',
      );
    }
    const body: unknown = request.body;
    // A taken name is refused whatever its case, before the name's own form is checked.
    const given = typeof body === 'object' && body !== null ? (body as { name?: unknown }).name : undefined;
    if (typeof given === 'string' && given !== '') {
      const lower = given.toLowerCase();
      if (fromFile.has(lower) || (await findStored(lower)) !== undefined) {
        return sendProblem(
          reply,
          409,
          'identity_provider_exists',
          `identity provider ${lower.slice(0, 64)} already exists`,
        );
      }
    }
    const parsed = IdentityProviderConfig.safeParse(body);
    if (!parsed.success)
      return sendProblem(reply, 400, 'invalid_identity_provider', describeIssue(parsed.error));
    const config = parsed.data;
    const at = now();
    let record: IdentityProviderRecord;
    try {
      record = await storage.identityProviders.create({
        name: config.name,
        type: config.type,
        config: await toStoredConfig(config, idgate.secret),
        disabled: config.disabled,
        createdAt: at,
        updatedAt: at,
      });
    } catch (error) {
      if (!(error instanceof StorageConflictError)) throw error;
      return sendProblem(
        reply,
        409,
        'identity_provider_exists',
        `identity provider ${config.name} already exists`,
      );
    }
    return reply
      .status(201)
      .header('Location', `${root}${BASE}/${config.name}`)
      .send(describeProvider(config, 'database', record.createdAt));
  });

  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post<Named>(`${BASE}/:name/${verb}`, options, async (request, reply) => {
      const name = request.params.name.toLowerCase();
      if (fromFile.has(name)) return readOnly(reply, name);
      if (!STORED_NAME.test(name)) return notFound(reply, request.params.name);
      const record = await storage.identityProviders.setDisabled(name, disabled, now());
      return record === undefined ? notFound(reply, request.params.name) : describeStored(record);
    });
  }

  app.delete<Named>(`${BASE}/:name`, options, async (request, reply) => {
    const name = request.params.name.toLowerCase();
    if (fromFile.has(name)) return readOnly(reply, name);
    if (!STORED_NAME.test(name) || !(await storage.identityProviders.remove(name))) {
      return notFound(reply, request.params.name);
    }
    return reply.status(204).send();
  });

  app.get<{ Params: { username: string } }>(
    '/admin/v1/users/:username/identities',
    options,
    async (request, reply) => {
      const { username } = request.params;
      const user = username.length > 128 ? undefined : await storage.users.findByUsername(username);
      if (user === undefined)
        return sendProblem(reply, 404, 'user_not_found', `there is no user ${username.slice(0, 64)}`);
      const identities = await storage.identities.listByUser(user.id);
      return { items: identities.map(linkedIdentityView) };
    },
  );
}
