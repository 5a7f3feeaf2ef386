import {
  CreateTrustInput,
  type DescribeIssueOptions,
  type Trust,
  type TrustEvaluation,
  TrustTestInput,
  UpdateTrustInput,
} from '@idgate/schema';
import { recordObjectChange } from '../audit/admin.js';
import type { TrustRecord } from '../model.js';
import { compileCondition, decodeSubjectToken, evaluateSubjectToken, runClaims } from '../trusts/evaluate.js';
import type { TrustKeySource } from '../trusts/keys.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { type AdminPorts, nowOf } from './ports.js';

type Ports = Pick<AdminPorts, 'storage' | 'clock' | 'auditActor' | 'auditIds'>;

/** A trust's fields besides its name: what its `admin.changed` events show and a declared trust sets. */
export const TRUST_FIELDS = [
  'issuer',
  'audience',
  'jwks',
  'discoveryUrl',
  'condition',
  'username',
  'groups',
  'clusters',
  'maxTtl',
] as const satisfies readonly (keyof TrustRecord)[];

const notFound = (name: string) => new AdminError('not_found', 'trust', `no trust ${name}`, { key: name });

/** A trust as the admin API shows it. */
export function trustView(record: TrustRecord): Trust {
  return {
    name: record.name,
    issuer: record.issuer,
    audience: record.audience,
    jwks: record.jwks as Trust['jwks'],
    discoveryUrl: record.discoveryUrl,
    condition: record.condition,
    username: record.username,
    groups: [...record.groups],
    clusters: [...record.clusters],
    maxTtl: record.maxTtl,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

function checkCondition(condition: string | null | undefined, name: string): void {
  if (condition === null || condition === undefined) return;
  try {
    compileCondition(condition);
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : 'does not parse';
    throw new AdminError('invalid_input', 'trust', `condition: is not a CEL expression: ${why}`, {
      key: name,
    });
  }
}

async function checkClusters(ports: Pick<AdminPorts, 'storage'>, clusters: readonly string[], name: string) {
  const known = new Set((await ports.storage.clusters.list()).map((cluster) => cluster.name));
  const unknown = clusters.filter((cluster) => !known.has(cluster));
  if (unknown.length > 0)
    throw new AdminError('invalid_input', 'trust', `clusters: no cluster ${unknown.join(', ')}`, {
      key: name,
    });
}

/**
 * Declares a trust of an external issuer (token exchange): the condition must parse as CEL and
 * every cluster named must be registered.
 * @throws AdminError `invalid_input` naming the bad field; `conflict` for a taken name.
 * @example await addTrust(ports, { name: 'gha', issuer: 'https://token.actions.githubusercontent.com', audience: 'idgate', username: 'ci:{repository}', clusters: ['prod'], maxTtl: 900 });
 */
export async function addTrust(
  ports: Ports,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<Trust> {
  const fields = parseAdminInput(CreateTrustInput, input, 'trust', options);
  checkCondition(fields.condition, fields.name);
  const now = nowOf(ports);
  const record: TrustRecord = {
    name: fields.name,
    issuer: fields.issuer,
    audience: fields.audience,
    jwks: fields.jwks ?? null,
    discoveryUrl: fields.discoveryUrl ?? null,
    condition: fields.condition ?? null,
    username: fields.username,
    groups: [...new Set(fields.groups)],
    clusters: [...new Set(fields.clusters)],
    maxTtl: fields.maxTtl,
    createdAt: now,
    updatedAt: now,
  };
  return ports.storage.transaction(async (tx) => {
    await checkClusters({ storage: tx }, record.clusters, record.name);
    const taken = () =>
      new AdminError('conflict', 'trust', `trust ${record.name} already exists`, { key: record.name });
    if ((await tx.trusts.findByName(record.name)) !== undefined) throw taken();
    const stored = await refusingConflicts(() => tx.trusts.create(record), taken);
    await recordObjectChange(tx, ports, { objectKind: 'trust', objectId: stored.name }, null, stored, [
      'name',
      ...TRUST_FIELDS,
    ]);
    return trustView(stored);
  });
}

/** Every trust, by name. */
export async function listTrusts(ports: Pick<AdminPorts, 'storage'>): Promise<Trust[]> {
  return (await ports.storage.trusts.list()).map(trustView);
}

/**
 * The trust called `name` (any case).
 * @throws AdminError `not_found`.
 */
export async function getTrust(ports: Pick<AdminPorts, 'storage'>, name: string): Promise<Trust> {
  const record = await ports.storage.trusts.findByName(name.toLowerCase());
  if (record === undefined) throw notFound(name);
  return trustView(record);
}

/**
 * Changes a trust's fields (`null` clears `jwks`, `discoveryUrl`, `condition`).
 * @throws AdminError `not_found`; `invalid_input` naming the bad field.
 */
export async function updateTrust(
  ports: Ports,
  name: string,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<Trust> {
  const fields = parseAdminInput(UpdateTrustInput, input, 'trust', options);
  checkCondition(fields.condition, name);
  return ports.storage.transaction(async (tx) => {
    const before = await tx.trusts.findByName(name.toLowerCase());
    if (before === undefined) throw notFound(name);
    const after: TrustRecord = { ...before, updatedAt: nowOf(ports) };
    if (fields.issuer !== undefined) after.issuer = fields.issuer;
    if (fields.audience !== undefined) after.audience = fields.audience;
    if (fields.jwks !== undefined) after.jwks = fields.jwks;
    if (fields.discoveryUrl !== undefined) after.discoveryUrl = fields.discoveryUrl;
    if (fields.condition !== undefined) after.condition = fields.condition;
    if (fields.username !== undefined) after.username = fields.username;
    if (fields.groups !== undefined) after.groups = [...new Set(fields.groups)];
    if (fields.clusters !== undefined) {
      after.clusters = [...new Set(fields.clusters)];
      await checkClusters({ storage: tx }, after.clusters, before.name);
    }
    if (fields.maxTtl !== undefined) after.maxTtl = fields.maxTtl;
    const stored = await tx.trusts.update(after);
    if (stored === undefined) throw notFound(name);
    await recordObjectChange(tx, ports, { objectKind: 'trust', objectId: stored.name }, before, stored, [
      ...TRUST_FIELDS,
    ]);
    return trustView(stored);
  });
}

/**
 * Removes a trust: the tokens exchanged under it stop being accepted at once.
 * @throws AdminError `not_found`.
 */
export async function removeTrust(ports: Ports, name: string): Promise<void> {
  await ports.storage.transaction(async (tx) => {
    const record = await tx.trusts.findByName(name.toLowerCase());
    if (record === undefined || !(await tx.trusts.remove(record.name))) throw notFound(name);
    await recordObjectChange(tx, ports, { objectKind: 'trust', objectId: record.name }, record, null, [
      'name',
      ...TRUST_FIELDS,
    ]);
  });
}

/**
 * Evaluates a subject token against the trust `name` as the token exchange would (signature, issuer,
 * audience, expiry, condition, username; with `cluster`, whether the trust allows it), issuing and
 * spending nothing: which rule failed, or what identity and clusters would result.
 * @throws AdminError `not_found`; `invalid_input` for a bad body.
 * @example const { matched, rule } = await testTrust(ports, keys, 'gha', { token });
 */
export async function testTrust(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'jwsCrypto'>,
  keys: TrustKeySource,
  name: string,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<TrustEvaluation> {
  const fields = parseAdminInput(TrustTestInput, input, 'trust', { ...options, secrets: ['token'] });
  const trust = await ports.storage.trusts.findByName(name.toLowerCase());
  if (trust === undefined) throw notFound(name);
  const decoded = decodeSubjectToken(fields.token);
  const claims = decoded?.claims ?? {};
  const base = {
    trust: trust.name,
    issuer: typeof claims.iss === 'string' ? claims.iss : null,
    subject: typeof claims.sub === 'string' ? claims.sub : null,
    run: runClaims(claims),
  };
  const decision = await evaluateSubjectToken(
    fields.token,
    [trust],
    {
      keys,
      clock: ports.clock,
      ...(ports.jwsCrypto === undefined ? {} : { jws: ports.jwsCrypto }),
    },
    decoded,
  );
  if (!decision.ok)
    return {
      ...base,
      matched: false,
      rule: decision.rule,
      reason: decision.reason,
      identity: null,
      clusters: [],
      maxTtl: null,
    };
  const identity = { username: decision.username, groups: decision.groups };
  if (fields.cluster !== undefined && !trust.clusters.includes(fields.cluster))
    return {
      ...base,
      matched: false,
      rule: 'cluster',
      reason: `trust ${trust.name} does not allow cluster ${fields.cluster}`,
      identity,
      clusters: [...trust.clusters],
      maxTtl: decision.maxLifetime,
    };
  return {
    ...base,
    matched: true,
    rule: null,
    reason: null,
    identity,
    clusters: [...trust.clusters],
    maxTtl: decision.maxLifetime,
  };
}
