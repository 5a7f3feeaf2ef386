import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { TestDatabase } from '../helpers/databases.js';
import { cliDatabaseUrls, envFor, runInProcess } from './support.js';

describe.each(cliDatabaseUrls())('idgate trusts on $name', ({ create }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeEach(async () => {
    database = await create();
    env = envFor(database.url);
    expect((await runInProcess(['migrate'], { env })).code).toBe(0);
    expect((await runInProcess(['clusters', 'add', 'prod'], { env })).code).toBe(0);
  });
  afterEach(async () => {
    await database.drop();
  });

  it('adds, lists, describes, updates, tests and removes a trust with an inline JWKS', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const dir = await mkdtemp(join(tmpdir(), 'idgate-trusts-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const jwksFile = join(dir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'sa1' }] }));
    const issuer = 'https://kubernetes.default.svc.cluster.local';
    const added = await runInProcess(
      [
        'trusts',
        'add',
        'Cluster-A',
        '--issuer',
        issuer,
        '--audience',
        'idgate',
        '--jwks',
        jwksFile,
        '--when',
        'claims["kubernetes.io"].namespace == "deploy"',
        '--username',
        'cluster-a:{sub}',
        '--groups',
        'deployers',
        '--clusters',
        'prod',
        '--ttl',
        '10m',
      ],
      { env },
    );
    expect(added).toMatchObject({ code: 0, stdout: `declared trust cluster-a: ${issuer} → prod\n` });

    const listed = await runInProcess(['trusts', 'list', '--json'], { env });
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { name: 'cluster-a', maxTtl: 600, groups: ['deployers'] },
    ]);
    const described = await runInProcess(['trusts', 'describe', 'cluster-a'], { env });
    expect(described.stdout).toContain('keys: inline (1)');
    expect(described.stdout).toContain('ttl: 600s');

    const bad = await runInProcess(['trusts', 'update', 'cluster-a', '--when', 'claims.('], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^idgate: condition: is not a CEL expression/);
    const over = await runInProcess(['trusts', 'update', 'cluster-a', '--clusters', 'nowhere'], { env });
    expect(over.stderr).toMatch(/clusters: no cluster nowhere/);

    const now = Math.floor(Date.now() / 1000);
    const mint = (namespace: string) =>
      new SignJWT({ 'kubernetes.io': { namespace, pod: { name: 'runner' } }, jti: `j-${namespace}` })
        .setProtectedHeader({ alg: 'ES256', kid: 'sa1' })
        .setIssuer(issuer)
        .setSubject('system:serviceaccount:deploy:runner')
        .setAudience('idgate')
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
    const matched = await runInProcess(['trusts', 'test', 'cluster-a', '--token', '-'], {
      env,
      input: `${await mint('deploy')}\n`,
    });
    expect(matched.code).toBe(0);
    expect(matched.stdout).toContain('trust cluster-a matches');
    expect(matched.stdout).toContain('username: cluster-a:system:serviceaccount:deploy:runner');
    expect(matched.stdout).toContain('namespace: deploy');
    const refused = await runInProcess(['trusts', 'test', 'cluster-a', '--token', '-', '--json'], {
      env,
      input: await mint('default'),
    });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ matched: false, rule: 'condition' });
    expect(refused.stderr).toBe('idgate: the token does not match trust cluster-a\n');

    expect((await runInProcess(['trusts', 'update', 'cluster-a', '--when', ''], { env })).code).toBe(0);
    const cleared = await runInProcess(['trusts', 'describe', 'cluster-a', '--json'], { env });
    expect(JSON.parse(cleared.stdout).condition).toBeNull();
    expect((await runInProcess(['trusts', 'remove', 'cluster-a'], { env })).stdout).toBe(
      'removed trust cluster-a\n',
    );
    const gone = await runInProcess(['trusts', 'describe', 'cluster-a'], { env });
    expect(gone).toMatchObject({ code: 1, stderr: 'idgate: no trust cluster-a\n' });
  });
});
