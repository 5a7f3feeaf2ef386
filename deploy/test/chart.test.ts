import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, readDeclarationFiles } from '@idgate/server';
import { afterAll, describe, expect, it } from 'vitest';
import { toolPath } from '../../apps/server/test/helpers/tools.js';
import { type KubernetesObject, parseObjects, validateObject } from './kubernetes-schemas.js';

const chartDir = fileURLToPath(new URL('../helm/idgate/', import.meta.url));
const examplesDir = join(chartDir, 'examples');
const examples = readdirSync(examplesDir)
  .filter((file) => file.endsWith('.yaml'))
  .sort();
const helm = toolPath('helm');
const scratch = mkdtempSync(join(tmpdir(), 'idgate-chart-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `helm template` of the chart with these values files and --set pairs; its stdout and stderr. */
function template(
  valuesFiles: string[],
  set: string[] = [],
): { status: number | null; out: string; err: string } {
  const result = spawnSync(
    helm as string,
    [
      'template',
      'idgate',
      chartDir,
      '--namespace',
      'idgate',
      '--kube-version',
      '1.30.0',
      ...valuesFiles.flatMap((file) => ['--values', file]),
      ...set.flatMap((pair) => ['--set', pair]),
    ],
    {
      encoding: 'utf8',
      env: { ...process.env, HELM_CACHE_HOME: scratch, HELM_CONFIG_HOME: scratch, HELM_DATA_HOME: scratch },
    },
  );
  return { status: result.status, out: result.stdout, err: result.stderr };
}

function render(valuesFiles: string[], set: string[] = []): KubernetesObject[] {
  const result = template(valuesFiles, set);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.err}`);
  return parseObjects(result.out);
}

function one(objects: KubernetesObject[], kind: string): KubernetesObject {
  const found = objects.filter((object) => object.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as KubernetesObject;
}

/** The server's configuration as a pod would load it: the ConfigMap's file, the pod's env, the Secret's values. */
function podConfig(objects: KubernetesObject[], secretValues: Record<string, string> = {}) {
  const configMap = one(objects, 'ConfigMap');
  const file = join(scratch, `idgate-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, configMap.data['idgate.yaml']);
  const container = one(objects, 'Deployment').spec.template.spec.containers[0];
  const env: Record<string, string> = {
    // The image's own environment (deploy/Dockerfile).
    IDGATE_HOST: '0.0.0.0',
    IDGATE_PORT: '8080',
    IDGATE_DATABASE_URL: 'sqlite:/var/lib/idgate/idgate.db',
  };
  for (const variable of container.env as Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef: { key: string } };
  }>) {
    const value = variable.value ?? secretValues[variable.valueFrom?.secretKeyRef.key ?? ''];
    if (value !== undefined) env[variable.name] = value;
  }
  expect(env.IDGATE_CONFIG).toBe(
    `${container.volumeMounts.find((m: { name: string }) => m.name === 'config').mountPath}/idgate.yaml`,
  );
  return loadConfig({ env: { ...env, IDGATE_CONFIG: file } });
}

/** NOTES.txt as helm prints it after an install (helm template leaves it out; this renders it through tpl). */
function notes(valuesFiles: string[]): string {
  const copy = join(scratch, `chart-${Math.random().toString(36).slice(2)}`);
  cpSync(chartDir, copy, { recursive: true });
  cpSync(join(chartDir, 'templates/NOTES.txt'), join(copy, 'notes.txt'));
  writeFileSync(
    join(copy, 'templates/notes-check.yaml'),
    'notes: {{ tpl (.Files.Get "notes.txt") . | toJson }}\n',
  );
  const out = execFileSync(
    helm as string,
    [
      'template',
      'idgate',
      copy,
      '--namespace',
      'idgate',
      '--show-only',
      'templates/notes-check.yaml',
      ...valuesFiles.flatMap((f) => ['--values', f]),
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.slice(out.indexOf('notes: ') + 'notes: '.length)) as string;
}

describe.skipIf(helm === undefined)('Helm chart deploy/helm/idgate (rendered by helm)', () => {
  it('is a helm 3 binary', () => {
    expect(execFileSync(helm as string, ['version', '--short'], { encoding: 'utf8' })).toMatch(/^v3\./);
  });

  it('has documented values files', () => {
    expect(examples).toEqual(expect.arrayContaining(['postgres-ha.yaml', 'sqlite.yaml']));
    const readme = readFileSync(join(chartDir, 'README.md'), 'utf8');
    for (const file of examples) expect(readme, file).toContain(`examples/${file}`);
  });

  for (const file of ['(defaults)', ...examples]) {
    const values = file === '(defaults)' ? [] : [join(examplesDir, file)];
    it(`${file}: passes helm lint --strict and renders only objects valid against the Kubernetes schemas`, () => {
      const lint = spawnSync(
        helm as string,
        ['lint', '--strict', chartDir, ...values.flatMap((v) => ['--values', v])],
        { encoding: 'utf8' },
      );
      expect(lint.status, lint.stdout + lint.stderr).toBe(0);
      const objects = render(values);
      expect(objects.length).toBeGreaterThanOrEqual(4);
      for (const object of objects) {
        expect(object.metadata.namespace, object.kind).toBeUndefined();
        expect(() => validateObject(object)).not.toThrow();
      }
      // Every reference inside the release points at something it renders, or at a Secret by reference.
      const deployment = one(objects, 'Deployment');
      const pod = deployment.spec.template;
      expect(deployment.spec.selector.matchLabels).toEqual(one(objects, 'Service').spec.selector);
      expect(pod.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
      const container = pod.spec.containers[0];
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
      expect(container.resources.limits.memory).toBe('256Mi');
      // The image's entrypoint (node --expose-gc --max-semi-space-size=8 dist/bin.js) is kept.
      expect(container.command).toBeUndefined();
      expect(container.args).toEqual(['serve']);
      expect(container.env).toContainEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=160' });
      expect(pod.spec.enableServiceLinks).toBe(false);
      expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
      expect(container.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      for (const volume of pod.spec.volumes) {
        if (volume.configMap) expect(one(objects, 'ConfigMap').metadata.name).toBe(volume.configMap.name);
        if (volume.persistentVolumeClaim)
          expect(one(objects, 'PersistentVolumeClaim').metadata.name).toBe(
            volume.persistentVolumeClaim.claimName,
          );
      }
      for (const monitor of objects.filter((o) => o.kind === 'ServiceMonitor'))
        expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
      // No Secret is ever rendered: secrets come by reference.
      expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    });
  }

  it('sqlite.yaml: one replica on a volume, replaced (not rolled), no PodDisruptionBudget', () => {
    const objects = render([join(examplesDir, 'sqlite.yaml')], ['replicaCount=5']);
    const deployment = one(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    const pvc = one(objects, 'PersistentVolumeClaim');
    expect(pvc.spec).toMatchObject({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    });
    const mount = deployment.spec.template.spec.containers[0].volumeMounts.find(
      (m: { name: string }) => m.name === 'data',
    );
    expect(mount.mountPath).toBe('/var/lib/idgate');
    expect(objects.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
    const config = podConfig(objects);
    expect(config.database.url).toBe('sqlite:/var/lib/idgate/idgate.db');
    expect(config.port).toBe(8080);
    expect(config.issuer).toBe('https://idgate.example.com/oauth');
    expect(one(objects, 'Ingress').spec.rules[0].host).toBe('idgate.example.com');
  });

  it('postgres-ha.yaml: three replicas rolling on a shared database, URL and secret by reference, PDB, ServiceMonitor', () => {
    const objects = render([join(examplesDir, 'postgres-ha.yaml')]);
    const deployment = one(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.strategy).toMatchObject({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0 },
    });
    expect(objects.filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);
    const env = deployment.spec.template.spec.containers[0].env;
    expect(env).toContainEqual({
      name: 'IDGATE_DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'idgate-secrets', key: 'IDGATE_DATABASE_URL' } },
    });
    expect(env).toContainEqual({
      name: 'IDGATE_SECRET',
      valueFrom: { secretKeyRef: { name: 'idgate-secrets', key: 'IDGATE_SECRET' } },
    });
    expect(one(objects, 'PodDisruptionBudget').spec.minAvailable).toBe(2);
    expect(one(objects, 'ServiceMonitor').metadata.labels?.release).toBe('prometheus');
    const policy = one(objects, 'NetworkPolicy');
    expect(policy.spec.ingress[0].from).toHaveLength(2);
    expect(one(objects, 'Ingress').spec.rules[0].http.paths.map((p: { path: string }) => p.path)).toEqual([
      '/oauth',
      '/.well-known',
      '/admin',
    ]);
    // The config: values become the server's file, and the server accepts it as it starts.
    const config = podConfig(objects, {
      IDGATE_DATABASE_URL: 'postgres://idgate:pw@postgres.example.internal:5432/idgate',
      IDGATE_SECRET: 'x'.repeat(48),
    });
    expect(config.database.url).toMatch(/^postgres:\/\//);
    expect(config.signing.algorithm).toBe('ES256');
    expect(config.tokens.accessTokenTtl).toBe(900);
    expect(config.trustProxy).toEqual(['10.0.0.0/8']);
  });

  it('a changed configuration rolls the pods (checksum annotation)', () => {
    const before = one(render([]), 'Deployment').spec.template.metadata.annotations['checksum/config'];
    const after = one(render([], ['config.log.level=debug']), 'Deployment').spec.template.metadata
      .annotations['checksum/config'];
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(after).not.toBe(before);
  });

  it('declarations: in the ConfigMap, applied at start, secrets from extra volumes; a change rolls the pods', async () => {
    const values = join(scratch, 'declarations.yaml');
    writeFileSync(
      values,
      `declarations:
  clusters:
    - name: prod
  apiKeys:
    - name: prod-webhook
      scopes: [tokenreview]
      cluster: prod
      key: { file: /etc/idgate-secrets/webhook-key }
extraVolumes:
  - name: webhook-key
    secret: { secretName: idgate-webhook-key }
extraVolumeMounts:
  - name: webhook-key
    mountPath: /etc/idgate-secrets
    readOnly: true
`,
    );
    const objects = render([values]);
    for (const object of objects) validateObject(object);
    // The file as the pod reads it at start.
    const mounted = join(scratch, 'mounted-declarations.yaml');
    writeFileSync(mounted, one(objects, 'ConfigMap').data['declarations.yaml']);
    const { declarations: declared } = await readDeclarationFiles([mounted]);
    expect(declared.apiKeys[0]?.key).toEqual({ file: '/etc/idgate-secrets/webhook-key' });
    const pod = one(objects, 'Deployment').spec.template.spec;
    const container = pod.containers[0];
    const env = Object.fromEntries(
      (container.env as Array<{ name: string; value?: string }>).map((v) => [v.name, v.value]),
    );
    const configMount = container.volumeMounts.find((m: { name: string }) => m.name === 'config').mountPath;
    expect(env.IDGATE_DECLARATIONS).toBe(`${configMount}/declarations.yaml`);
    expect(env.IDGATE_DECLARATIONS_PRUNE).toBe('true');
    expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toContain(
      '/etc/idgate-secrets',
    );
    expect(pod.volumes.map((v: { name: string }) => v.name)).toContain('webhook-key');
    expect(podConfig(objects).declarations).toEqual({
      path: `${configMount}/declarations.yaml`,
      prune: true,
      manager: 'config',
    });
    const checksum = (o: KubernetesObject[]) =>
      one(o, 'Deployment').spec.template.metadata.annotations['checksum/config'];
    expect(checksum(render([values], ['declarations.clusters[0].name=stage']))).not.toBe(checksum(objects));
    // Without declarations, nothing of them is rendered.
    const plain = render([]);
    expect(one(plain, 'ConfigMap').data['declarations.yaml']).toBeUndefined();
    expect(JSON.stringify(one(plain, 'Deployment'))).not.toContain('IDGATE_DECLARATIONS');
  });

  it('refuses values that cannot work, naming them', () => {
    const cases: Array<[string[], RegExp]> = [
      [['database.type=postgres'], /database\.postgres\.existingSecret/],
      [['database.type=postgres', 'database.postgres.existingSecret=db'], /secret\.existingSecret/],
      [['database.type=mysql'], /database\.type must be sqlite or postgres/],
      [['config.port=9000'], /config\.port is set by the chart/],
      [['config.database.url=postgres://x'], /config\.database\.url is set by the chart/],
      [['config.secret=abc'], /config\.secret is set by the chart/],
    ];
    for (const [set, message] of cases) {
      const result = template([], set);
      expect(result.status, set.join(' ')).not.toBe(0);
      expect(result.err).toMatch(message);
    }
  });

  it('a configuration the server refuses is caught before deploying (unknown key, bad duration)', () => {
    for (const set of ['config.tokens.accessTokenTtl=soon', 'config.nonsense=1']) {
      const objects = render([], [set]);
      expect(() => podConfig(objects), set).toThrow(/invalid configuration|nonsense|accessTokenTtl/);
    }
  });

  it('the schemas catch a broken object (the validation is not a pass-through)', () => {
    const deployment = one(render([]), 'Deployment');
    deployment.spec.replicas = 'three';
    expect(() => validateObject(deployment)).toThrow(/replicas must be integer/);
    expect(() =>
      validateObject({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'x' } }),
    ).toThrow(/no schema/);
  });

  it('NOTES print the webhook kubeconfig and AuthenticationConfiguration commands', () => {
    const text = notes([join(examplesDir, 'postgres-ha.yaml')]);
    expect(text).toContain(
      'kubectl -n idgate exec deploy/idgate -- node dist/bin.js clusters show CLUSTER --webhook-kubeconfig',
    );
    expect(text).toContain(
      'kubectl -n idgate exec deploy/idgate -- node dist/bin.js clusters show CLUSTER --authentication-config',
    );
    expect(text).toContain('init --json');
    expect(text).toContain('3 replica(s) on postgres');
  });
});
