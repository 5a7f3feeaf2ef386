import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyError, authenticateApiKey, generateApiKey, verifySecret } from '@idgate/core';
import { ApplyResult } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/databases.js';
import { assertBuilt, cliDatabaseUrls, envFor, lines, openTestServices, runInProcess } from './support.js';

beforeAll(assertBuilt);

const WEB_SECRET = 'web-client-secret-0123456789abcdef';
const ALICE_PASSWORD = 'correct horse battery staple';

/** A declarations file: a confidential client, a cluster, a user and the cluster's webhook key. */
function declarations(
  keyFile: string,
  changes: { email?: string; cluster?: string; withKey?: boolean } = {},
) {
  const cluster = changes.cluster ?? 'prod';
  return `# idgate declarations
clients:
  - clientId: web
    name: Web app
    redirectUris: [https://app.example.com/cb]
    grantTypes: [authorization_code, refresh_token, client_credentials]
    secret: { env: WEB_SECRET }
clusters:
  - name: ${cluster}
users:
  - username: alice
    email: ${changes.email ?? 'alice@example.com'}
    groups: [sre]
    password: { env: ALICE_PASSWORD }
${
  changes.withKey === false
    ? ''
    : `apiKeys:
  - name: ${cluster}-webhook
    scopes: [tokenreview]
    cluster: ${cluster}
    key: { file: ${keyFile} }
`
}`;
}

describe.each(cliDatabaseUrls())('idgate apply on $name', ({ create }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let dir: string;
  let file: string;
  let keyFile: string;
  let key: string;

  beforeEach(async () => {
    database = await create();
    env = envFor(database.url, { WEB_SECRET, ALICE_PASSWORD });
    dir = await mkdtemp(join(tmpdir(), 'idgate-apply-'));
    file = join(dir, 'idgate.yaml');
    keyFile = join(dir, 'webhook-key');
    key = (await generateApiKey()).key;
    // As a Kubernetes secret mounts it: with a trailing newline.
    await writeFile(keyFile, `${key}\n`);
    await writeFile(file, declarations(keyFile));
  });
  afterEach(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const apply = (...args: string[]) => runInProcess(['apply', '-f', file, ...args], { env });
  const plan = async (...args: string[]) => {
    const result = await apply('--json', ...args);
    expect(result.stderr).toBe('');
    return ApplyResult.parse(JSON.parse(result.stdout));
  };
  const steps = (result: ApplyResult) =>
    result.changes.map(
      (c) => `${c.action} ${c.kind} ${c.name}${c.drift ? ' drift' : ''}${c.adopted ? ' adopted' : ''}`,
    );

  async function stored() {
    const services = await openTestServices(database.url);
    try {
      const client = await services.storage.clients.findById('web');
      const user = await services.storage.users.findByUsername('alice');
      const clusters = (await services.storage.clusters.list()).map((c) => `${c.name} ${c.audience}`);
      let review: string;
      try {
        const record = await authenticateApiKey(key, 'tokenreview', (prefix) =>
          services.storage.apiKeys.findByPrefix(prefix),
        );
        review = `ok ${record.cluster?.name}`;
      } catch (error) {
        if (!(error instanceof ApiKeyError)) throw error;
        review = error.code;
      }
      return {
        client:
          client === undefined
            ? undefined
            : { name: client.name, secretOk: await verifySecret(WEB_SECRET, client.secretHash ?? '') },
        user:
          user === undefined
            ? undefined
            : {
                email: user.email,
                groups: user.groups,
                password: await services.hasher.verify(user.passwordHash ?? '', ALICE_PASSWORD),
              },
        clusters,
        review,
      };
    } finally {
      await services.close();
    }
  }

  it('plans with --dry-run, applies, and a second apply changes nothing', async () => {
    const dry = await apply('--dry-run');
    expect(dry.code).toBe(0);
    expect(lines(dry.stdout)).toEqual(
      expect.arrayContaining([
        '+ client web',
        '    secret: "[secret]"',
        '+ cluster prod',
        '    audience: "kubernetes:prod"',
        '+ user alice',
        '    email: "alice@example.com"',
        '+ api-key prod-webhook',
        'Plan: 4 to create, 0 to update, 0 to delete, 0 unchanged.',
      ]),
    );
    // No secret, hash or password reaches the output.
    for (const secret of [WEB_SECRET, ALICE_PASSWORD, key]) expect(dry.stdout).not.toContain(secret);
    expect(await stored()).toEqual({ client: undefined, user: undefined, clusters: [], review: 'invalid' });

    const applied = await apply();
    expect(applied.code).toBe(0);
    expect(lines(applied.stdout).at(-1)).toBe('Applied: 4 created, 0 updated, 0 deleted, 0 unchanged.');
    expect(await stored()).toEqual({
      client: { name: 'Web app', secretOk: true },
      user: { email: 'alice@example.com', groups: ['sre'], password: true },
      clusters: ['prod kubernetes:prod'],
      review: 'ok prod',
    });

    const again = await apply('--dry-run', '--exit-code');
    expect(again.code).toBe(0);
    expect(lines(again.stdout)).toEqual(['Plan: 0 to create, 0 to update, 0 to delete, 4 unchanged.']);
    expect(steps(await plan())).toEqual([
      'unchanged client web',
      'unchanged cluster prod',
      'unchanged user alice',
      'unchanged api-key prod-webhook',
    ]);
  });

  it('shows changes by hand as drift and puts them back; --exit-code says so', async () => {
    expect((await apply()).code).toBe(0);
    expect(
      (await runInProcess(['users', 'update', 'alice', '--email', 'bob@example.com'], { env })).code,
    ).toBe(0);
    expect((await runInProcess(['clients', 'update', 'web', '--name', 'Renamed'], { env })).code).toBe(0);

    const check = await apply('--dry-run', '--exit-code');
    expect(check.code).toBe(2);
    expect(check.stderr).toBe('idgate: the plan changes 2 object(s)\n');
    expect(lines(check.stdout)).toEqual([
      '~ client web (drift: changed by hand since last applied)',
      '    name: "Renamed" → "Web app"',
      '~ user alice (drift: changed by hand since last applied)',
      '    email: "bob@example.com" → "alice@example.com"',
      'Plan: 0 to create, 2 to update, 0 to delete, 2 unchanged (2 drifted).',
    ]);
    expect((await apply()).code).toBe(0);
    expect((await stored()).user?.email).toBe('alice@example.com');
    expect((await stored()).client?.name).toBe('Web app');

    // A change in the file is an update, not drift; the password is never reset.
    await writeFile(file, declarations(keyFile, { email: 'alice@corp.example' }));
    expect(steps(await plan())).toContain('update user alice');
    expect(await stored()).toMatchObject({ user: { email: 'alice@corp.example', password: true } });
  });

  it('prunes only what the manager declared, and refuses another manager its objects', async () => {
    expect((await apply()).code).toBe(0);
    expect((await runInProcess(['clusters', 'add', 'by-hand'], { env })).code).toBe(0);

    // The cluster and its key leave the file: without --prune they stay, with it they go.
    await writeFile(file, declarations(keyFile, { withKey: false, cluster: 'staging' }));
    expect(steps(await plan('--dry-run'))).toEqual([
      'unchanged client web',
      'create cluster staging',
      'unchanged user alice',
    ]);
    const pruned = await plan('--prune');
    expect(steps(pruned)).toEqual([
      'unchanged client web',
      'create cluster staging',
      'unchanged user alice',
      'delete api-key prod-webhook',
      'delete cluster prod',
    ]);
    expect(await stored()).toMatchObject({
      clusters: ['by-hand kubernetes:by-hand', 'staging kubernetes:staging'],
      review: 'invalid',
    });

    const other = await runInProcess(['apply', '-f', file, '--manager', 'team-b'], { env });
    expect(other.code).toBe(1);
    expect(other.stderr).toBe('idgate: client web is managed by apply, not team-b\n');
  });

  it('adopts an existing object, and refuses bad declarations before changing anything', async () => {
    expect((await runInProcess(['users', 'add', 'alice', '--email', 'old@example.com'], { env })).code).toBe(
      0,
    );
    expect(steps(await plan('--dry-run'))).toContain('update user alice adopted');

    const missing = await runInProcess(['apply', '-f', file], { env: { ...env, WEB_SECRET: '' } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('idgate: clients[0].secret: environment variable WEB_SECRET is not set\n');

    await writeFile(
      join(dir, 'inline.yaml'),
      'clients:\n  - clientId: ci\n    name: CI\n    secret: hunter2-inline\n',
    );
    const inline = await runInProcess(['apply', '-f', join(dir, 'inline.yaml')], { env });
    expect(inline.code).toBe(1);
    expect(inline.stderr).toMatch(/^idgate: .*inline\.yaml: clients\[0\]\.secret: must be a reference/);
    expect(inline.stderr).not.toContain('hunter2-inline');

    await writeFile(join(dir, 'typo.yaml'), 'cluster:\n  - name: prod\n');
    const typo = await runInProcess(['apply', '-f', join(dir, 'typo.yaml')], { env });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/typo\.yaml: the file: unknown field cluster\n$/);

    await writeFile(keyFile, 'not-a-key\n');
    const badKey = await runInProcess(['apply', '-f', file], { env });
    expect(badKey.stderr).toMatch(/^idgate: apiKeys\[0\]\.key: must be an idgate API key/);
    // Nothing of the refused runs was stored: alice is as she was.
    expect(await stored()).toMatchObject({
      client: undefined,
      clusters: [],
      user: { email: 'old@example.com' },
    });
  });

  it("declares groups, and changes a cluster's audience with its webhook key still working", async () => {
    expect((await apply()).code).toBe(0);
    await writeFile(
      join(dir, 'groups.yaml'),
      'groups:\n  - name: sre\n    description: Site reliability\n  - name: empty\n',
    );
    const withGroups = await runInProcess(['apply', '-f', file, '-f', join(dir, 'groups.yaml'), '--json'], {
      env,
    });
    expect(withGroups.stderr).toBe('');
    // sre exists already (alice is in it): adopted and described; empty is new.
    expect(
      steps(ApplyResult.parse(JSON.parse(withGroups.stdout))).filter((s) => s.includes('group')),
    ).toEqual(['update group sre adopted', 'create group empty']);
    const described = await runInProcess(['groups', 'describe', 'sre', '--json'], { env });
    expect(JSON.parse(described.stdout)).toMatchObject({
      name: 'sre',
      description: 'Site reliability',
      members: 1,
    });

    await writeFile(
      file,
      declarations(keyFile).replace(
        '  - name: prod\n',
        '  - name: prod\n    audience: https://prod.k8s.example\n',
      ),
    );
    const moved = await plan();
    expect(moved.changes.find((c) => c.kind === 'cluster')).toMatchObject({
      action: 'update',
      fields: [{ field: 'audience', before: 'kubernetes:prod', after: 'https://prod.k8s.example' }],
    });
    expect(await stored()).toMatchObject({ clusters: ['prod https://prod.k8s.example'], review: 'ok prod' });

    // A group with members the declarations do not hold is not pruned away from them.
    // (alice is declared: her groups are the file's, so she leaves it; bob is not.)
    expect((await runInProcess(['groups', 'add', 'empty', 'alice'], { env })).code).toBe(0);
    expect((await runInProcess(['users', 'add', 'bob', '--group', 'empty'], { env })).code).toBe(0);
    await writeFile(join(dir, 'groups.yaml'), 'groups:\n  - name: sre\n    description: Site reliability\n');
    const prune = await runInProcess(['apply', '-f', file, '-f', join(dir, 'groups.yaml'), '--prune'], {
      env,
    });
    expect(prune.code).toBe(1);
    expect(prune.stderr).toMatch(/^idgate: group empty has 1 member/);
  });

  it('declares trusts of external issuers for token exchange, and keeps their clusters', async () => {
    const trust = (maxTtl: number) =>
      `trusts:\n  - name: gha\n    issuer: https://token.actions.githubusercontent.com\n    audience: idgate\n    condition: claims.repository == "acme/infra"\n    username: "ci:{repository}"\n    groups: [ci-deployers]\n    clusters: [prod]\n    maxTtl: ${maxTtl}\n`;
    await writeFile(join(dir, 'trusts.yaml'), trust(900));
    const both = ['apply', '-f', file, '-f', join(dir, 'trusts.yaml')];
    const created = await runInProcess([...both, '--json'], { env });
    expect(created.stderr).toBe('');
    expect(steps(ApplyResult.parse(JSON.parse(created.stdout)))).toContain('create trust gha');
    const shown = await runInProcess(['trusts', 'describe', 'gha', '--json'], { env });
    expect(JSON.parse(shown.stdout)).toMatchObject({
      clusters: ['prod'],
      maxTtl: 900,
      groups: ['ci-deployers'],
    });

    await writeFile(join(dir, 'trusts.yaml'), trust(600));
    const changed = await runInProcess([...both, '--dry-run'], { env });
    expect(lines(changed.stdout)).toEqual([
      '~ trust gha',
      '    maxTtl: 900 → 600',
      'Plan: 0 to create, 1 to update, 0 to delete, 4 unchanged.',
    ]);

    // A plan that deletes a cluster a declared trust still names is refused before anything changes.
    await writeFile(file, declarations(keyFile, { withKey: false, cluster: 'staging' }));
    const refused = await runInProcess([...both, '--prune'], { env });
    expect(refused.stderr).toBe('idgate: trust gha names cluster prod, which this plan deletes\n');
    expect((await stored()).clusters).toEqual(['prod kubernetes:prod']);
  });

  it('declares that a cluster requires a second factor, shows it as a change, and puts it back after drift', async () => {
    expect((await apply()).code).toBe(0);
    const clusterSteps = (result: ApplyResult) => steps(result).filter((s) => s.includes(' cluster '));
    const required = declarations(keyFile).replace(
      '  - name: prod\n',
      '  - name: prod\n    requireMfa: true\n',
    );
    await writeFile(file, required);
    const planned = await plan('--dry-run');
    expect(planned.changes.find((c) => c.kind === 'cluster')).toMatchObject({
      action: 'update',
      fields: [{ field: 'requireMfa', after: true }],
    });
    expect(clusterSteps(await plan())).toEqual(['update cluster prod']);
    expect((await runInProcess(['clusters', 'show', 'prod', '--json'], { env })).stdout).toContain(
      '"requireMfa": true',
    );
    expect(clusterSteps(await plan())).toEqual(['unchanged cluster prod']);
    // Turned off by hand: drift, put back by the next apply.
    expect((await runInProcess(['clusters', 'update', 'prod', '--no-require-mfa'], { env })).code).toBe(0);
    expect(clusterSteps(await plan())).toEqual(['update cluster prod drift']);
    expect(
      JSON.parse((await runInProcess(['clusters', 'show', 'prod', '--json'], { env })).stdout),
    ).toMatchObject({ requireMfa: true });
    // Left out of the file: false again.
    await writeFile(file, declarations(keyFile));
    expect(clusterSteps(await plan())).toEqual(['update cluster prod']);
    expect(
      JSON.parse((await runInProcess(['clusters', 'show', 'prod', '--json'], { env })).stdout),
    ).toMatchObject({ requireMfa: false });
  });

  it('declares that a client and a group require a second factor, and puts both back after drift', async () => {
    expect((await apply()).code).toBe(0);
    const policySteps = (result: ApplyResult) =>
      steps(result).filter((s) => s.includes(' client ') || s.includes(' group '));
    const required = `${declarations(keyFile).replace(
      '    secret: { env: WEB_SECRET }\n',
      '    secret: { env: WEB_SECRET }\n    requireMfa: true\n',
    )}groups:\n  - name: ops\n    requireMfa: true\n`;
    await writeFile(file, required);
    const planned = await plan('--dry-run');
    expect(planned.changes.find((c) => c.kind === 'client')).toMatchObject({
      action: 'update',
      fields: [{ field: 'requireMfa', after: true }],
    });
    expect(policySteps(await plan())).toEqual(['update client web', 'create group ops']);
    const show = async (...args: string[]) =>
      JSON.parse((await runInProcess([...args, '--json'], { env })).stdout) as { requireMfa: boolean };
    expect(await show('clients', 'show', 'web')).toMatchObject({ requireMfa: true });
    expect(await show('groups', 'describe', 'ops')).toMatchObject({ requireMfa: true });
    expect(policySteps(await plan())).toEqual(['unchanged client web', 'unchanged group ops']);
    // Turned off by hand: drift, put back by the next apply.
    expect((await runInProcess(['clients', 'update', 'web', '--no-require-mfa'], { env })).code).toBe(0);
    expect((await runInProcess(['groups', 'update', 'ops', '--no-require-mfa'], { env })).code).toBe(0);
    expect(policySteps(await plan())).toEqual(['update client web drift', 'update group ops drift']);
    expect(await show('clients', 'show', 'web')).toMatchObject({ requireMfa: true });
    expect(await show('groups', 'describe', 'ops')).toMatchObject({ requireMfa: true });
  });

  it('reads a directory of files in name order, and prints a new key with api-keys generate', async () => {
    await rm(file);
    await writeFile(join(dir, '10-clusters.yaml'), 'clusters:\n  - name: a\n');
    await writeFile(
      join(dir, '20-more.yml'),
      'clusters:\n  - name: b\n    audience: https://b.example\n---\ngroups: []\n',
    );
    await writeFile(join(dir, 'README.txt'), 'not read');
    const result = await runInProcess(['apply', '-f', dir], { env });
    expect(result.stderr).toBe('');
    expect(lines(result.stdout).at(-1)).toBe('Applied: 2 created, 0 updated, 0 deleted, 0 unchanged.');
    expect((await stored()).clusters).toEqual(['a kubernetes:a', 'b https://b.example']);

    const generated = await runInProcess(['api-keys', 'generate'], { env });
    expect(generated.stdout).toMatch(/^idg_[a-z2-7]{8}_[A-Za-z0-9_-]{43}\n$/);
  });
});
