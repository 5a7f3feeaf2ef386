import {
  type ApiKeyScope,
  type ApplyResult,
  type Declarations,
  type DeclaredApiKey,
  type DeclaredClient,
  DeclaredKind,
  defaultClusterAudience,
  IDENTITY_PROVIDER_SECRETS,
  IdentityProviderConfig,
  type PlannedChange,
  type PlannedField,
  type SecretReference,
} from '@idgate/schema';
import { lacksScope } from '../api-keys/api-key.js';
import { apiKeyScopes, missingScope } from '../api-keys/scopes.js';
import { recordAdminChange } from '../audit/admin.js';
import { sha256 } from '../internal/encoding.js';
import type { ApiKeyRecord, ClientRecord, TrustRecord } from '../model.js';
import type { DeclaredObjectRecord } from '../ports/declaration-storage.js';
import type { Storage } from '../ports/storage.js';
import { hashSecret } from '../secrets.js';
import { recordApiKeyCreated, revokeApiKey, updateApiKey } from './api-keys.js';
import { CLIENT_FIELDS, parseClientRegistration, removeClient, updateClient } from './clients.js';
import { registerClusterIn, removeCluster, updateCluster } from './clusters.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { createGroup, deleteGroup, updateGroup } from './groups.js';
import { addIdentityProvider, removeIdentityProvider, updateIdentityProvider } from './identity-providers.js';
import { type AdminPorts, nowOf } from './ports.js';
import { describeIdentityProvider, describeStoredProvider } from './provider-config.js';
import { addTrust, removeTrust, TRUST_FIELDS, updateTrust } from './trusts.js';
import { createUser, deleteUser, updateUser } from './users.js';

/**
 * Reads a declared secret: the server reads environment variables and files; `where` names the
 * field for an error (`clients[0].secret`).
 * @throws AdminError `invalid_input` when it cannot be read.
 */
export type SecretReader = (reference: SecretReference, where: string) => Promise<string>;

/** What applying declarations runs over: the admin ports, and how secrets by reference are read. */
export interface DeclarationPorts extends AdminPorts {
  readonly readSecret: SecretReader;
}

/** How a plan is made and carried out. */
export interface ApplyOptions {
  /** Who owns what is declared (`--manager`); objects of another manager are refused. */
  manager: string;
  /** Only plan. */
  dryRun: boolean;
  /** Delete what `manager` declared before and no longer does. */
  prune: boolean;
}

/** The order kinds are created in; deletions run the other way round. */
const KIND_ORDER: readonly DeclaredKind[] = DeclaredKind.options;

/** Fields shown as `[secret]` in a plan: their values are hashes of secrets. */
const SECRET_FIELDS = new Set(['secret', 'key', 'secrets']);
const SECRET_SHOWN = '[secret]';

type Projection = Record<string, unknown>;

/** A declared object, its secrets read, as the plan compares it. */
interface Desired {
  kind: DeclaredKind;
  name: string;
  projection: Projection;
  /** Makes the object; answers its stored id (an API key's) or its name. */
  create(ports: DeclarationPorts): Promise<string>;
  /** Brings the stored object (whose projection is `current`) to the declared one. */
  update(ports: DeclarationPorts, current: Stored): Promise<string>;
}

/** A stored object as the plan sees it. */
interface Stored {
  objectId: string;
  projection: Projection;
}

/** How one kind is found and deleted. */
interface KindStore {
  /** The stored object a declaration of `name` means (through its record, when managed). */
  find(
    storage: Storage,
    name: string,
    record: DeclaredObjectRecord | undefined,
    desired: Desired | undefined,
  ): Promise<Stored | undefined>;
  remove(ports: DeclarationPorts, stored: Stored, name: string): Promise<void>;
}

/** Canonical JSON: keys sorted at every level, so equal objects hash alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const hashOf = (projection: Projection) => sha256(canonical(projection));

const invalid = (message: string) => new AdminError('invalid_input', 'declarations', message);

/** Every field whose value differs between `before` and `after`, secrets masked. */
function diff(before: Projection | undefined, after: Projection | undefined): PlannedField[] {
  const fields = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const changed: PlannedField[] = [];
  for (const field of [...fields].sort()) {
    const was = before?.[field];
    const will = after?.[field];
    if (canonical(was) === canonical(will)) continue;
    const shown = (value: unknown) =>
      value === undefined ? null : SECRET_FIELDS.has(field) ? SECRET_SHOWN : (value as PlannedField['after']);
    changed.push({ field, before: shown(was), after: shown(will) });
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------
// Clients

const CLIENT_PROJECTED = CLIENT_FIELDS;

function clientProjection(client: Omit<ClientRecord, 'clientId' | 'createdAt'>): Projection {
  const projection: Projection = {};
  for (const field of CLIENT_PROJECTED) projection[field] = client[field];
  projection.secret = client.secretHash;
  // Only when set, so that clients applied before the setting existed keep their hash.
  if (client.requireMfa === true) projection.requireMfa = true;
  return projection;
}

async function desiredClient(
  ports: DeclarationPorts,
  declared: DeclaredClient,
  at: string,
): Promise<Desired> {
  const { clientId, secret, ...registration } = declared;
  const settings = parseClientRegistration(registration, ports.lifetimes, {
    label: (path) => `${at}${path === '' ? '' : `.${path}`}`,
  });
  const secretHash =
    secret === undefined ? null : await hashSecret(await ports.readSecret(secret, `${at}.secret`));
  const projection = clientProjection({
    ...settings,
    secretHash,
    previousSecretHash: null,
    previousSecretExpiresAt: null,
  });
  return {
    kind: 'client',
    name: clientId,
    projection,
    async create(ports) {
      const record: ClientRecord = {
        ...settings,
        clientId,
        secretHash,
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        createdAt: nowOf(ports),
      };
      await ports.storage.transaction(async (tx) => {
        const created = await refusingConflicts(
          () => tx.clients.create(record),
          () => new AdminError('conflict', 'client', `client ${clientId} already exists`, { key: clientId }),
        );
        await recordAdminChange(tx, ports, {
          objectKind: 'client',
          objectId: clientId,
          action: 'created',
          operation: 'apply',
          clientId,
          before: null,
          after: Object.fromEntries(CLIENT_PROJECTED.map((field) => [field, created[field]])) as Record<
            string,
            never
          >,
        });
      });
      return clientId;
    },
    async update(ports, current) {
      if (current.projection.public !== settings.public)
        throw invalid(
          `${at}: client ${clientId} is ${current.projection.public ? 'public' : 'confidential'}; whether a client is public cannot change (delete it, or declare another client id)`,
        );
      const patch: Record<string, unknown> = {};
      for (const field of CLIENT_PROJECTED)
        if (field !== 'public' && canonical(current.projection[field]) !== canonical(settings[field]))
          patch[field] = settings[field];
      if ((current.projection.requireMfa === true) !== (settings.requireMfa === true))
        patch.requireMfa = settings.requireMfa === true;
      if (Object.keys(patch).length > 0) await updateClient(ports, clientId, patch);
      if (current.projection.secret !== secretHash && secretHash !== null)
        await ports.storage.transaction(async (tx) => {
          const stored = await tx.clients.findById(clientId);
          if (stored === undefined)
            throw new AdminError('not_found', 'client', `no client ${clientId}`, { key: clientId });
          await tx.clients.update({
            ...stored,
            secretHash,
            previousSecretHash: null,
            previousSecretExpiresAt: null,
          });
          await recordAdminChange(tx, ports, {
            objectKind: 'client',
            objectId: clientId,
            action: 'updated',
            operation: 'rotate-secret',
            clientId,
            before: {},
            after: { gracePeriod: 0 },
          });
        });
      return clientId;
    },
  };
}

const clientStore: KindStore = {
  async find(storage, name) {
    const client = await storage.clients.findById(name);
    return client === undefined ? undefined : { objectId: name, projection: clientProjection(client) };
  },
  async remove(ports, stored) {
    await removeClient(ports, stored.objectId);
  },
};

// ---------------------------------------------------------------------------------------------
// Clusters

/**
 * What a cluster's declaration compares: its audience, and `requireMfa` only when set, so that
 * clusters applied before the setting existed keep their hash (and show no drift).
 */
function clusterProjection(cluster: { audience: string; requireMfa: boolean }): Projection {
  return cluster.requireMfa
    ? { audience: cluster.audience, requireMfa: true }
    : { audience: cluster.audience };
}

function desiredCluster(declared: Declarations['clusters'][number]): Desired {
  const audience = declared.audience ?? defaultClusterAudience(declared.name);
  const requireMfa = declared.requireMfa ?? false;
  return {
    kind: 'cluster',
    name: declared.name,
    projection: clusterProjection({ audience, requireMfa }),
    async create(ports) {
      await ports.storage.transaction((tx) =>
        registerClusterIn(tx, ports, { name: declared.name, audience, requireMfa, createdAt: nowOf(ports) }),
      );
      return declared.name;
    },
    async update(ports) {
      // The cluster's keys follow its new audience (nothing is revoked).
      await updateCluster(ports, declared.name, { audience, requireMfa });
      return declared.name;
    },
  };
}

const clusterStore: KindStore = {
  async find(storage, name) {
    const cluster = await storage.clusters.findByName(name);
    return cluster === undefined ? undefined : { objectId: name, projection: clusterProjection(cluster) };
  },
  async remove(ports, stored) {
    await removeCluster(ports, stored.objectId);
  },
};

// ---------------------------------------------------------------------------------------------
// Trusts (token exchange)

function trustProjection(trust: Omit<TrustRecord, 'name' | 'createdAt' | 'updatedAt'>): Projection {
  return Object.fromEntries(TRUST_FIELDS.map((field) => [field, trust[field]]));
}

function desiredTrust(declared: Declarations['trusts'][number]): Desired {
  const projection = trustProjection({
    issuer: declared.issuer,
    audience: declared.audience,
    jwks: declared.jwks ?? null,
    discoveryUrl: declared.discoveryUrl ?? null,
    condition: declared.condition ?? null,
    username: declared.username,
    groups: [...new Set(declared.groups)],
    clusters: [...new Set(declared.clusters)],
    maxTtl: declared.maxTtl,
  });
  return {
    kind: 'trust',
    name: declared.name,
    projection,
    async create(ports) {
      await addTrust(ports, declared);
      return declared.name;
    },
    async update(ports) {
      await updateTrust(ports, declared.name, projection);
      return declared.name;
    },
  };
}

const trustStore: KindStore = {
  async find(storage, name) {
    const trust = await storage.trusts.findByName(name);
    return trust === undefined ? undefined : { objectId: trust.name, projection: trustProjection(trust) };
  },
  async remove(ports, stored) {
    await removeTrust(ports, stored.objectId);
  },
};

// ---------------------------------------------------------------------------------------------
// Groups

/**
 * What a group's declaration compares: its description, and `requireMfa` only when set, so that
 * groups applied before the setting existed keep their hash (and show no drift).
 */
function groupProjection(group: {
  description: string | null;
  requireMfa?: boolean | undefined;
}): Projection {
  return group.requireMfa === true
    ? { description: group.description, requireMfa: true }
    : { description: group.description };
}

function desiredGroup(declared: Declarations['groups'][number]): Desired {
  const description = declared.description ?? null;
  const requireMfa = declared.requireMfa ?? false;
  return {
    kind: 'group',
    name: declared.name,
    projection: groupProjection({ description, requireMfa }),
    async create(ports) {
      await createGroup(ports, { name: declared.name, description, requireMfa });
      return declared.name;
    },
    async update(ports) {
      await updateGroup(ports, declared.name, { description, requireMfa });
      return declared.name;
    },
  };
}

const groupStore: KindStore = {
  async find(storage, name) {
    const group = await storage.groups.find(name);
    return group === undefined ? undefined : { objectId: name, projection: groupProjection(group) };
  },
  async remove(ports, stored) {
    // Members the declarations do not hold keep it: the deletion is refused, naming how many.
    await deleteGroup(ports, stored.objectId);
  },
};

// ---------------------------------------------------------------------------------------------
// Users

function desiredUser(declared: Declarations['users'][number], at: string): Desired {
  const { password, username, ...fields } = declared;
  const name = username.toLowerCase();
  return {
    kind: 'user',
    name,
    projection: { ...fields },
    async create(ports) {
      const chosen = password === undefined ? undefined : await ports.readSecret(password, `${at}.password`);
      const { user } = await createUser(
        ports,
        { username, email: fields.email, displayName: fields.displayName, groups: fields.groups },
        chosen,
      );
      if (fields.disabled) await updateUser(ports, user.username, { disabled: true });
      return name;
    },
    async update(ports, current) {
      const patch: Record<string, unknown> = {};
      for (const [field, value] of Object.entries(fields))
        if (canonical(current.projection[field]) !== canonical(value)) patch[field] = value;
      await updateUser(ports, username, patch);
      return name;
    },
  };
}

const userStore: KindStore = {
  async find(storage, name) {
    const user = await storage.users.findByUsername(name);
    if (user === undefined) return undefined;
    const { email, displayName, groups, disabled } = user;
    return { objectId: name, projection: { email, displayName, groups, disabled } };
  },
  async remove(ports, stored) {
    await deleteUser(ports, stored.objectId);
  },
};

// ---------------------------------------------------------------------------------------------
// Identity providers

async function desiredProvider(
  ports: DeclarationPorts,
  declared: Declarations['identityProviders'][number],
  at: string,
): Promise<Desired> {
  const resolved: Record<string, unknown> = { ...declared };
  const secrets: Record<string, string> = {};
  for (const field of IDENTITY_PROVIDER_SECRETS) {
    const reference = declared[field];
    if (reference === undefined) continue;
    const value = await ports.readSecret(reference, `${at}.${field}`);
    resolved[field] = value;
    secrets[field] = await hashSecret(value);
  }
  const config = parseAdminInput(IdentityProviderConfig, resolved, 'declarations', {
    label: (path) => `${at}${path === '' ? '' : `.${path}`}`,
    secrets: IDENTITY_PROVIDER_SECRETS,
  });
  const name = config.name.toLowerCase();
  const shown = describeIdentityProvider(config, 'database', null, null).config;
  return {
    kind: 'identity-provider',
    name,
    projection: { config: shown, secrets: await hashOf(secrets) },
    async create(ports) {
      await addIdentityProvider(ports, resolved);
      return name;
    },
    async update(ports, current) {
      const patch: Record<string, unknown> = { ...resolved };
      const stored = (current.projection.config ?? {}) as Record<string, unknown>;
      for (const field of Object.keys(stored)) if (!(field in patch)) patch[field] = null;
      // Secrets are sent only when one changed: a patch without them keeps the sealed ones.
      if (current.projection.secrets === (await hashOf(secrets)))
        for (const field of IDENTITY_PROVIDER_SECRETS) delete patch[field];
      await updateIdentityProvider(ports, name, patch);
      return name;
    },
  };
}

const providerStore: KindStore = {
  async find(storage, name, record) {
    const provider = await storage.identityProviders.findByName(name);
    if (provider === undefined) return undefined;
    // Sealed secrets are never opened to compare: a managed provider's are as last applied.
    return {
      objectId: provider.name,
      projection: { config: describeStoredProvider(provider).config, secrets: record?.secrets ?? null },
    };
  },
  async remove(ports, stored) {
    await removeIdentityProvider(ports, stored.objectId);
  },
};

// ---------------------------------------------------------------------------------------------
// API keys

const KEY_PATTERN = /^(idg_[a-z2-7]{8})_[A-Za-z0-9_-]{43}$/;

function apiKeyProjection(key: ApiKeyRecord): Projection {
  return {
    scopes: [...key.scopes].sort(),
    cluster: key.cluster?.name ?? null,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    key: key.hash,
  };
}

async function desiredApiKey(
  ports: DeclarationPorts,
  declared: DeclaredApiKey,
  at: string,
  clusters: ReadonlyMap<string, string>,
): Promise<Desired> {
  const value = await ports.readSecret(declared.key, `${at}.key`);
  const prefix = KEY_PATTERN.exec(value)?.[1];
  if (prefix === undefined)
    throw invalid(
      `${at}.key: must be an idgate API key (idg_ and 52 more characters; make one with \`idgate api-keys generate\`)`,
    );
  const hash = await hashSecret(value);
  const scopes = apiKeyScopes({ scopes: declared.scopes, roles: declared.roles });
  const expiresAt =
    declared.expiresAt === undefined || declared.expiresAt === null ? null : new Date(declared.expiresAt);
  const projection: Projection = {
    scopes: [...scopes].sort(),
    cluster: declared.cluster ?? null,
    expiresAt: expiresAt?.toISOString() ?? null,
    key: hash,
  };
  const create = async (ports: DeclarationPorts) => {
    let cluster = null;
    if (declared.cluster !== undefined) {
      const audience =
        clusters.get(declared.cluster) ??
        (await ports.storage.clusters.findByName(declared.cluster))?.audience;
      if (audience === undefined) throw invalid(`${at}.cluster: no cluster ${declared.cluster}`);
      cluster = { name: declared.cluster, audience };
    }
    const record: ApiKeyRecord = {
      id: crypto.randomUUID(),
      name: declared.name,
      prefix,
      hash,
      scopes,
      cluster,
      createdAt: nowOf(ports),
      lastUsedAt: null,
      expiresAt,
      revokedAt: null,
    };
    await ports.storage.transaction(async (tx) => {
      const created = await refusingConflicts(
        () => tx.apiKeys.create(record),
        () =>
          invalid(
            `${at}.key: this key (${prefix}) was used before; make a new one with \`idgate api-keys generate\``,
          ),
      );
      await recordApiKeyCreated(tx, ports, created);
    });
    return record.id;
  };
  return {
    kind: 'api-key',
    name: declared.name,
    projection,
    create,
    async update(ports, current) {
      const same = (field: string) => canonical(current.projection[field]) === canonical(projection[field]);
      if (same('key') && same('scopes') && same('cluster')) {
        await updateApiKey(ports, current.objectId, { expiresAt: expiresAt?.toISOString() ?? null });
        return current.objectId;
      }
      if (same('key'))
        throw invalid(
          `${at}: an API key's scopes and cluster never change; give it a new key (\`idgate api-keys generate\`) to replace it`,
        );
      // A new key replaces the stored one: the new one is made before the old one stops working.
      const id = await create(ports);
      await revokeApiKey(ports, current.objectId);
      return id;
    },
  };
}

const apiKeyStore: KindStore = {
  async find(storage, name, record, desired) {
    const live = (key: ApiKeyRecord | undefined) =>
      key === undefined || key.revokedAt !== null ? undefined : key;
    let key = record === undefined ? undefined : live(await storage.apiKeys.findById(record.objectId));
    if (key === undefined && desired !== undefined) {
      // An unmanaged key is adopted only when it is the very key declared.
      const candidate = live(
        (await storage.apiKeys.list()).find((k) => k.name === name && k.hash === desired.projection.key),
      );
      key = candidate;
    }
    return key === undefined ? undefined : { objectId: key.id, projection: apiKeyProjection(key) };
  },
  async remove(ports, stored) {
    await revokeApiKey(ports, stored.objectId);
  },
};

// ---------------------------------------------------------------------------------------------

const STORES: Record<DeclaredKind, KindStore> = {
  'identity-provider': providerStore,
  client: clientStore,
  cluster: clusterStore,
  trust: trustStore,
  group: groupStore,
  user: userStore,
  'api-key': apiKeyStore,
};

/** Every declared object, secrets read and each checked, or the first problem; nothing is changed yet. */
async function readDeclarations(ports: DeclarationPorts, declarations: Declarations): Promise<Desired[]> {
  const desired: Desired[] = [];
  for (const [i, provider] of declarations.identityProviders.entries())
    desired.push(await desiredProvider(ports, provider, `identityProviders[${i}]`));
  for (const [i, client] of declarations.clients.entries())
    desired.push(await desiredClient(ports, client, `clients[${i}]`));
  for (const cluster of declarations.clusters) desired.push(desiredCluster(cluster));
  for (const trust of declarations.trusts) desired.push(desiredTrust(trust));
  for (const group of declarations.groups) desired.push(desiredGroup(group));
  for (const [i, user] of declarations.users.entries()) desired.push(desiredUser(user, `users[${i}]`));
  const clusters = new Map(
    declarations.clusters.map((c) => [c.name, c.audience ?? defaultClusterAudience(c.name)] as const),
  );
  for (const [i, key] of declarations.apiKeys.entries())
    desired.push(await desiredApiKey(ports, key, `apiKeys[${i}]`, clusters));
  const seen = new Set<string>();
  for (const object of desired) {
    const id = `${object.kind}:${object.name}`;
    if (seen.has(id)) throw invalid(`${object.kind} ${object.name} is declared more than once`);
    seen.add(id);
  }
  return desired;
}

interface Step {
  change: PlannedChange;
  desired: Desired | undefined;
  stored: Stored | undefined;
}

const rank = (kind: DeclaredKind) => KIND_ORDER.indexOf(kind);

/** The scope of the admin API that reads, and the one that changes, each kind. */
const KIND_SCOPES: Record<DeclaredKind, readonly [ApiKeyScope, ApiKeyScope]> = {
  'identity-provider': ['identity-providers:read', 'identity-providers:write'],
  client: ['clients:read', 'clients:write'],
  cluster: ['clusters:read', 'clusters:write'],
  trust: ['trusts:read', 'trusts:write'],
  group: ['users:read', 'users:write'],
  user: ['users:read', 'users:write'],
  'api-key': ['api-keys:read', 'api-keys:write'],
};

/**
 * Refuses an API key acting through `ports` that lacks, for a kind the plan touches, the scope
 * that reads it (a dry run) or changes it; and one that would declare a key stronger than itself.
 */
function refuseMissingScopes(ports: DeclarationPorts, steps: readonly Step[], options: ApplyOptions): void {
  const held = ports.actingScopes;
  if (held === undefined) return;
  for (const { change, desired } of steps) {
    const scope = KIND_SCOPES[change.kind][options.dryRun ? 0 : 1];
    if (missingScope(held, [scope]) !== undefined)
      throw lacksScope(scope, `, which ${change.kind} ${change.name} needs`);
    const declaredScopes =
      change.kind === 'api-key' ? (desired?.projection.scopes as ApiKeyScope[] | undefined) : undefined;
    const stronger = declaredScopes === undefined ? undefined : missingScope(held, declaredScopes);
    if (stronger !== undefined) throw lacksScope(stronger, `, which API key ${change.name} would have`);
  }
}

/**
 * Plans, and unless `dryRun` carries out, what makes storage hold the declared objects: each is
 * created, updated (back, when changed by hand: `drift`) or left unchanged, and with `prune`
 * what the manager declared before and no longer does is deleted. Secrets are read and every
 * object checked before anything changes; each object then changes in its own transaction with
 * its usual audit event, so a failure part-way leaves what was done done, and applying again
 * finishes. Applying the same declarations twice changes nothing the second time.
 * @throws AdminError `invalid_input` (object `declarations`) naming the first bad field;
 * `conflict` for an object another manager owns.
 * @example const result = await applyDeclarations(ports, Declarations.parse(file), { manager: 'apply', dryRun: true, prune: false });
 */
export async function applyDeclarations(
  ports: DeclarationPorts,
  declarations: Declarations,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const desired = await readDeclarations(ports, declarations);
  const records = new Map(
    (await ports.storage.declaredObjects.list()).map(
      (record) => [`${record.kind}:${record.name}`, record] as const,
    ),
  );
  const steps: Step[] = [];
  for (const object of desired) {
    const record = records.get(`${object.kind}:${object.name}`);
    if (record !== undefined && record.manager !== options.manager)
      throw new AdminError(
        'conflict',
        'declarations',
        `${object.kind} ${object.name} is managed by ${record.manager}, not ${options.manager}`,
        { key: object.name, problem: 'declaration_conflict' },
      );
    const stored = await STORES[object.kind].find(ports.storage, object.name, record, object);
    const fields = diff(stored?.projection, object.projection);
    const drift =
      record !== undefined &&
      (stored === undefined || (await hashOf(stored.projection)) !== record.appliedHash);
    steps.push({
      change: {
        kind: object.kind,
        name: object.name,
        action: stored === undefined ? 'create' : fields.length > 0 ? 'update' : 'unchanged',
        drift,
        adopted: record === undefined && stored !== undefined,
        fields,
      },
      desired: object,
      stored,
    });
  }
  if (options.prune) {
    const declared = new Set(desired.map((object) => `${object.kind}:${object.name}`));
    const gone = [...records.values()]
      .filter(
        (record) => record.manager === options.manager && !declared.has(`${record.kind}:${record.name}`),
      )
      .sort((a, b) => rank(b.kind) - rank(a.kind));
    for (const record of gone) {
      const stored = await STORES[record.kind].find(ports.storage, record.name, record, undefined);
      steps.push({
        change: {
          kind: record.kind,
          name: record.name,
          action: 'delete',
          drift: stored === undefined || (await hashOf(stored.projection)) !== record.appliedHash,
          adopted: false,
          fields: diff(stored?.projection, undefined),
        },
        desired: undefined,
        stored,
      });
    }
  }
  const deletedClusters = new Set(
    steps
      .filter((s) => s.change.kind === 'cluster' && s.change.action === 'delete')
      .map((s) => s.change.name),
  );
  for (const step of steps) {
    if (step.change.kind === 'api-key' && step.desired !== undefined) {
      const cluster = step.desired.projection.cluster;
      if (typeof cluster === 'string' && deletedClusters.has(cluster))
        throw invalid(`API key ${step.change.name} is bound to cluster ${cluster}, which this plan deletes`);
    }
    if (step.change.kind === 'trust' && step.desired !== undefined) {
      const gone = (step.desired.projection.clusters as string[]).find((c) => deletedClusters.has(c));
      if (gone !== undefined)
        throw invalid(`trust ${step.change.name} names cluster ${gone}, which this plan deletes`);
    }
  }
  refuseMissingScopes(ports, steps, options);
  if (!options.dryRun) for (const step of steps) await carryOut(ports, options.manager, step);
  const count = (action: PlannedChange['action']) => steps.filter((s) => s.change.action === action).length;
  return {
    manager: options.manager,
    dryRun: options.dryRun,
    changes: steps.map((step) => step.change),
    summary: {
      create: count('create'),
      update: count('update'),
      delete: count('delete'),
      unchanged: count('unchanged'),
      drift: steps.filter((step) => step.change.drift).length,
    },
  };
}

async function carryOut(ports: DeclarationPorts, manager: string, step: Step): Promise<void> {
  const { change, desired, stored } = step;
  if (desired === undefined) {
    if (stored !== undefined) await STORES[change.kind].remove(ports, stored, change.name);
    await ports.storage.declaredObjects.remove(change.kind, change.name);
    return;
  }
  let objectId = stored?.objectId ?? desired.name;
  if (change.action === 'create') objectId = await desired.create(ports);
  else if (change.action === 'update' && stored !== undefined) objectId = await desired.update(ports, stored);
  await ports.storage.declaredObjects.put({
    kind: desired.kind,
    name: desired.name,
    objectId,
    manager,
    secrets: typeof desired.projection.secrets === 'string' ? desired.projection.secrets : null,
    appliedHash: await hashOf(desired.projection),
    appliedAt: nowOf(ports),
  });
}
