import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiKeyError, authenticateApiKey } from '@idgate/core';
import { Cluster, CreatedCluster } from '@idgate/schema';
import { evaluate as evaluateCel } from '@marcbachmann/cel-js';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { TestDatabase } from '../helpers/databases.js';
import {
  assertBuilt,
  cliDatabaseUrls,
  envFor,
  errorLines,
  lines,
  openTestServices,
  runInProcess,
  tempSqlite,
} from './support.js';

beforeAll(assertBuilt);

const HTTPS = { IDGATE_ISSUER: 'https://id.example.com/oauth' };
const PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUtest\n-----END CERTIFICATE-----\n';

describe.each(cliDatabaseUrls())('idgate clusters on $name', ({ create }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeEach(async () => {
    database = await create();
    env = envFor(database.url);
    expect((await runInProcess(['migrate'], { env })).code).toBe(0);
  });
  afterEach(async () => {
    await database.drop();
  });

  /** Which cluster the key is bound to, or the ApiKeyError failure. */
  async function binding(key: string): Promise<string> {
    const services = await openTestServices(database.url);
    try {
      const record = await authenticateApiKey(key, 'tokenreview', (p) =>
        services.storage.apiKeys.findByPrefix(p),
      );
      return record.cluster?.name ?? 'unbound';
    } catch (error) {
      if (error instanceof ApiKeyError) return error.code;
      throw error;
    } finally {
      await services.close();
    }
  }

  it('adds a cluster, printing its audience, the kubectl client and the bound key once', async () => {
    const added = await runInProcess(['clusters', 'add', 'Prod'], { env });
    expect(added.code).toBe(0);
    const out = lines(added.stdout);
    expect(out[0]).toBe('registered cluster prod');
    expect(out[1]).toBe('audience: kubernetes:prod');
    expect(out[2]).toMatch(/^kubectl client: cl_[a-z0-9]+ \(created; shared by every cluster\)$/);
    const key = /^tokenreview API key: (idg_\S+) {2}\(shown only once; bound to this cluster\)$/.exec(
      out[3] ?? '',
    )?.[1];
    expect(key).toBeDefined();
    expect(await binding(key as string)).toBe('prod');

    const json = await runInProcess(
      ['clusters', 'add', 'staging', '--audience', 'https://staging.k8s.example', '--json'],
      {
        env,
      },
    );
    const created = CreatedCluster.parse(JSON.parse(json.stdout));
    expect(created.cluster.audience).toBe('https://staging.k8s.example');
    expect(created.kubectlClientCreated).toBe(false);
    expect(out[2]).toContain(created.cluster.kubectlClientId as string);

    const list = await runInProcess(['clusters', 'list', '--json'], { env });
    const clusters = (JSON.parse(list.stdout) as unknown[]).map((c) => Cluster.parse(c));
    expect(clusters.map((c) => [c.name, c.audience])).toEqual([
      ['prod', 'kubernetes:prod'],
      ['staging', 'https://staging.k8s.example'],
    ]);
    const table = lines((await runInProcess(['clusters', 'list'], { env })).stdout);
    expect(table[0]).toMatch(/^NAME +AUDIENCE +MFA +KUBECTL_CLIENT +CREATED$/);
    expect(out[4]).toBe('require MFA: no');
    expect(table).toHaveLength(3);
    expect(lines((await runInProcess(['clusters', 'show', 'PROD'], { env })).stdout)[1]).toBe(
      'audience: kubernetes:prod',
    );

    const clients = JSON.parse((await runInProcess(['clients', 'list', '--json'], { env })).stdout) as Array<{
      name: string;
      audiences: string[];
    }>;
    expect(clients).toHaveLength(1);
    expect(clients[0]).toMatchObject({
      name: 'kubectl',
      audiences: ['kubernetes:prod', 'https://staging.k8s.example'],
    });
  });

  it('requires a second factor with --require-mfa, and prints a claim validation rule on acr that CEL enforces', async () => {
    const added = await runInProcess(['clusters', 'add', 'prod', '--require-mfa', '--json'], { env });
    expect(CreatedCluster.parse(JSON.parse(added.stdout)).cluster.requireMfa).toBe(true);
    await runInProcess(['clusters', 'add', 'dev'], { env });
    expect(lines((await runInProcess(['clusters', 'show', 'prod'], { env })).stdout)[2]).toBe(
      'require MFA: yes',
    );
    const rulesOf = async (name: string) => {
      const shown = await runInProcess(['clusters', 'show', name, '--authentication-config'], {
        env: { ...env, ...HTTPS },
      });
      expect(shown.code).toBe(0);
      const document = parseYaml(shown.stdout) as {
        jwt: Array<{ claimValidationRules: Array<{ expression: string; message: string }> }>;
      };
      return document.jwt[0]?.claimValidationRules ?? [];
    };
    const rules = await rulesOf('prod');
    expect(rules.at(-1)).toEqual({
      expression: "has(claims.acr) && claims.acr == 'urn:idgate:acr:mfa'",
      message:
        'cluster prod requires a sign-in with a second factor (acr urn:idgate:acr:mfa): sign in again with kubectl idgate',
    });
    // As kube-apiserver would: every claim validation rule must be true, evaluated by a CEL library.
    const base = { preferred_username: 'alice', client_id: 'cl_kubectl', sid: 'g1', sub: 'u1' };
    const mfa = { ...base, acr: 'urn:idgate:acr:mfa', amr: ['pwd', 'otp', 'mfa'] };
    const password = { ...base, acr: 'urn:idgate:acr:sf', amr: ['pwd'] };
    const accepts = (all: typeof rules, claims: object) =>
      all.every((rule) => evaluateCel(rule.expression, { claims }) === true);
    expect(accepts(rules, mfa)).toBe(true);
    expect(accepts(rules, password)).toBe(false);
    expect(accepts(rules, base)).toBe(false);
    // A cluster that does not require it has no such rule and takes both.
    const devRules = await rulesOf('dev');
    expect(devRules).toHaveLength(2);
    expect(accepts(devRules, password)).toBe(true);

    const off = await runInProcess(['clusters', 'update', 'prod', '--no-require-mfa'], { env });
    expect(lines(off.stdout)[2]).toBe('require MFA: no');
    expect(accepts(await rulesOf('prod'), password)).toBe(true);
    const on = await runInProcess(['clusters', 'update', 'dev', '--require-mfa', '--json'], { env });
    expect(Cluster.parse(JSON.parse(on.stdout)).requireMfa).toBe(true);
  });

  it('refuses a taken name, a bad name and an unknown cluster with one line', async () => {
    await runInProcess(['clusters', 'add', 'prod'], { env });
    const taken = await runInProcess(['clusters', 'add', 'PROD'], { env });
    expect(taken.code).toBe(1);
    expect(errorLines(taken.stderr)).toEqual(['idgate: cluster prod already exists']);
    const bad = await runInProcess(['clusters', 'add', 'a_b'], { env });
    expect(errorLines(bad.stderr)).toEqual([
      'idgate: NAME "a_b": must be 1 to 63 letters, digits and -, starting and ending with a letter or digit',
    ]);
    const badAudience = await runInProcess(['clusters', 'add', 'x', '--audience', 'no uri'], { env });
    expect(errorLines(badAudience.stderr)[0]).toMatch(
      /^idgate: --audience "no uri": must be an absolute URI/,
    );
    for (const args of [
      ['show', 'nope'],
      ['remove', 'nope'],
    ]) {
      const missing = await runInProcess(['clusters', ...args], { env });
      expect(missing.code).toBe(1);
      expect(errorLines(missing.stderr)).toEqual(['idgate: no cluster nope']);
    }
  });

  it('removes a cluster, revoking its keys', async () => {
    const created = CreatedCluster.parse(
      JSON.parse((await runInProcess(['clusters', 'add', 'prod', '--json'], { env })).stdout),
    );
    const removed = await runInProcess(['clusters', 'remove', 'prod'], { env });
    expect(removed.stdout).toBe('cluster prod removed (1 API key(s) revoked)\n');
    expect(await binding(created.apiKey)).toBe('invalid');
    expect((await runInProcess(['clusters', 'list'], { env })).stdout).toBe('no clusters\n');
  });

  it('prints a webhook kubeconfig with a fresh bound key, saying so on stderr', async () => {
    const created = CreatedCluster.parse(
      JSON.parse((await runInProcess(['clusters', 'add', 'prod', '--json'], { env })).stdout),
    );
    const { dir, remove } = await tempSqlite();
    try {
      const ca = join(dir, 'ca.pem');
      await writeFile(ca, PEM);
      const shown = await runInProcess(
        ['clusters', 'show', 'prod', '--webhook-kubeconfig', '--certificate-authority', ca],
        { env: { ...env, ...HTTPS } },
      );
      expect(shown.code).toBe(0);
      const config = parseYaml(shown.stdout) as Record<string, unknown> & {
        clusters: Array<{ name: string; cluster: Record<string, string> }>;
        users: Array<{ name: string; user: { token: string } }>;
        contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
      };
      expect(config).toMatchObject({ apiVersion: 'v1', kind: 'Config', 'current-context': 'webhook' });
      expect(config.clusters).toEqual([
        {
          name: 'idgate',
          cluster: {
            server: 'https://id.example.com/oauth/authenticate',
            'certificate-authority-data': Buffer.from(PEM).toString('base64'),
          },
        },
      ]);
      expect(config.contexts).toEqual([
        { name: 'webhook', context: { cluster: 'idgate', user: 'idgate-prod' } },
      ]);
      const token = config.users[0]?.user.token as string;
      expect(token).not.toBe(created.apiKey);
      expect(await binding(token)).toBe('prod');
      expect(await binding(created.apiKey)).toBe('prod');
      expect(errorLines(shown.stderr)).toEqual([
        expect.stringMatching(
          /^idgate: created API key idg_[a-z2-7]{8} \(id \S+\) bound to cluster prod for this kubeconfig; older keys stay valid until `idgate api-keys revoke`$/,
        ),
      ]);
      expect(shown.stderr).not.toContain(token);
    } finally {
      await remove();
    }
  });

  it('prints an AuthenticationConfiguration that Kubernetes can read, field by field', async () => {
    await runInProcess(['clusters', 'add', 'prod'], { env });
    const shown = await runInProcess(['clusters', 'show', 'prod', '--authentication-config'], {
      env: { ...env, ...HTTPS },
    });
    expect(shown.code).toBe(0);
    expect(parseYaml(shown.stdout)).toEqual({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthenticationConfiguration',
      jwt: [
        {
          issuer: {
            url: 'https://id.example.com/oauth',
            audiences: ['kubernetes:prod'],
            audienceMatchPolicy: 'MatchAny',
          },
          claimValidationRules: [
            {
              expression: "has(claims.preferred_username) && claims.preferred_username != ''",
              message:
                'the token has no preferred_username: ask idgate for a token with resource=kubernetes:prod',
            },
            {
              expression: 'has(claims.client_id) && has(claims.sid)',
              message: 'the token is not an idgate access token of a signed-in user',
            },
          ],
          claimMappings: {
            username: { claim: 'preferred_username', prefix: '' },
            groups: { claim: 'groups', prefix: '' },
            uid: { claim: 'sub' },
            extra: [
              { key: 'idgate.dev/client-id', valueExpression: 'claims.client_id' },
              { key: 'idgate.dev/grant-id', valueExpression: 'claims.sid' },
            ],
          },
          userValidationRules: [
            {
              expression: "!user.username.startsWith('system:')",
              message: 'username must not start with system:, which Kubernetes reserves',
            },
            {
              expression: "user.groups.all(group, !group.startsWith('system:'))",
              message: 'groups must not start with system:, which Kubernetes reserves',
            },
          ],
        },
      ],
    });
    const discovery = await runInProcess(
      [
        'clusters',
        'show',
        'prod',
        '--authentication-config',
        '--discovery-url',
        'https://idgate.idgate.svc/oauth/.well-known/openid-configuration',
      ],
      { env: { ...env, ...HTTPS } },
    );
    expect(
      (parseYaml(discovery.stdout) as { jwt: Array<{ issuer: { discoveryURL: string } }> }).jwt[0]?.issuer
        .discoveryURL,
    ).toBe('https://idgate.idgate.svc/oauth/.well-known/openid-configuration');
  });

  it('writes --certificate-authority into the AuthenticationConfiguration as issuer.certificateAuthority (PEM)', async () => {
    await runInProcess(['clusters', 'add', 'prod'], { env });
    const { dir, remove } = await tempSqlite();
    try {
      const ca = join(dir, 'ca.pem');
      await writeFile(ca, PEM);
      const shown = await runInProcess(
        ['clusters', 'show', 'prod', '--authentication-config', '--certificate-authority', ca],
        { env: { ...env, ...HTTPS } },
      );
      expect(shown.code).toBe(0);
      const issuer = (parseYaml(shown.stdout) as { jwt: Array<{ issuer: Record<string, unknown> }> }).jwt[0]
        ?.issuer;
      expect(issuer).toEqual({
        url: 'https://id.example.com/oauth',
        certificateAuthority: PEM,
        audiences: ['kubernetes:prod'],
        audienceMatchPolicy: 'MatchAny',
      });
      const alone = await runInProcess(['clusters', 'show', 'prod', '--certificate-authority', ca], {
        env: { ...env, ...HTTPS },
      });
      expect(alone.code).not.toBe(0);
      expect(errorLines(alone.stderr)).toEqual([
        'idgate: --certificate-authority goes with --webhook-kubeconfig or --authentication-config',
      ]);
    } finally {
      await remove();
    }
  });

  it('refuses an AuthenticationConfiguration for an http issuer or EdDSA keys', async () => {
    await runInProcess(['clusters', 'add', 'prod'], { env });
    const http = await runInProcess(['clusters', 'show', 'prod', '--authentication-config'], { env });
    expect(http.code).toBe(1);
    expect(http.stdout).toBe('');
    expect(errorLines(http.stderr)).toEqual([
      'idgate: the issuer http://localhost:8080/oauth is not https: Kubernetes accepts only an https JWT issuer (set issuer to an https URL)',
    ]);
    const eddsa = await runInProcess(['clusters', 'show', 'prod', '--authentication-config'], {
      env: { ...env, ...HTTPS, IDGATE_SIGNING_ALGORITHM: 'EdDSA' },
    });
    expect(eddsa.code).toBe(1);
    expect(errorLines(eddsa.stderr)).toEqual([
      'idgate: tokens are signed with EdDSA, which Kubernetes does not verify: use RS256 or ES256 (signing.algorithm), then idgate keys rotate',
    ]);
  });

  it('runs as a child process too: add --json is one JSON document, nothing on stderr', async () => {
    const result = await runInProcess(['clusters', 'add', 'edge', '--json'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(CreatedCluster.parse(JSON.parse(result.stdout)).cluster.name).toBe('edge');
  });

  it('renames a cluster and changes its audience; its key stays valid and bound to it', async () => {
    const added = CreatedCluster.parse(
      JSON.parse((await runInProcess(['clusters', 'add', 'prod', '--json'], { env })).stdout),
    );
    await runInProcess(['clusters', 'add', 'dev'], { env });
    const updated = await runInProcess(
      ['clusters', 'update', 'PROD', '--name', 'live', '--audience', 'https://live.example', '--json'],
      { env },
    );
    expect(updated.code).toBe(0);
    expect(Cluster.parse(JSON.parse(updated.stdout))).toMatchObject({
      name: 'live',
      audience: 'https://live.example',
    });
    expect(await binding(added.apiKey)).toBe('live');
    const config = await runInProcess(['clusters', 'show', 'live', '--authentication-config'], {
      env: { ...env, ...HTTPS },
    });
    expect(config.stdout).toContain('https://live.example');
    expect(config.stdout).not.toContain('kubernetes:prod');
    expect(
      lines(
        (await runInProcess(['clusters', 'update', 'live', '--audience', 'kubernetes:x'], { env })).stdout,
      )[0],
    ).toBe('updated cluster live');
    expect(await runInProcess(['clusters', 'update', 'live', '--name', 'dev'], { env })).toMatchObject({
      code: 1,
      stderr: 'idgate: cluster dev already exists\n',
    });
    expect(
      await runInProcess(['clusters', 'update', 'live', '--audience', 'kubernetes:dev'], { env }),
    ).toMatchObject({
      code: 1,
      stderr: 'idgate: another cluster has the audience kubernetes:dev\n',
    });
    expect(await runInProcess(['clusters', 'update', 'live', '--name', 'bad_name'], { env })).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^idgate: --name "bad_name": must be 1 to 63/),
    });
    expect(await runInProcess(['clusters', 'update', 'live'], { env })).toMatchObject({
      code: 1,
      stderr: 'idgate: give --name, --audience, --require-mfa or --no-require-mfa\n',
    });
    expect(await runInProcess(['clusters', 'update', 'nope', '--name', 'x'], { env })).toMatchObject({
      code: 1,
      stderr: 'idgate: no cluster nope\n',
    });
  });
});
