import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CONFIG_ENVIRONMENT, loadConfig } from '../../src/config.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const deployDir = join(root, 'deploy');

/** How the server runs in production: Node.js flags and glibc malloc settings (see deploy/Dockerfile). */
const NODE_FLAGS = ['--expose-gc', '--max-semi-space-size=8'];
const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };
const kubernetesDir = join(deployDir, 'kubernetes');

/** Variables Node.js (and the C library under it) reads that the manifests may set. */
const NODE_VARIABLES = new Set([
  'NODE_ENV',
  'NODE_OPTIONS',
  'NODE_EXTRA_CA_CERTS',
  ...Object.keys(MALLOC_ENV),
]);
/** What idgate reads besides the config map: the YAML file to load. */
const IDGATE_VARIABLES = new Set([...Object.keys(CONFIG_ENVIRONMENT), 'IDGATE_CONFIG']);

// Parsed YAML, loosely typed: the tests below check each field they read.
type Manifest = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are walked field by field, each read asserted
} & Record<string, any>;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

// The Helm chart (deploy/helm) is rendered and checked by deploy/test/chart.test.ts.
const files = ['kubernetes', 'kube-apiserver'].flatMap((dir) => yamlFiles(join(deployDir, dir)));
const documents: Array<{ file: string; manifest: Manifest }> = files.flatMap((file) =>
  parseAllDocuments(readFileSync(file, 'utf8')).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
    return { file: relative(deployDir, file), manifest: document.toJS() as Manifest };
  }),
);

function only(kind: string, where: (m: Manifest) => boolean = () => true): Manifest {
  const found = documents.filter((d) => d.manifest.kind === kind && where(d.manifest));
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return (found[0] as { manifest: Manifest }).manifest;
}

const deployment = only('Deployment');
const service = only('Service');
const pdb = only('PodDisruptionBudget');
const configMap = only('ConfigMap');
const secret = only('Secret');
const kustomization = only('Kustomization');
const kubeconfig = only('Config');
const pod = deployment.spec.template;
const container = pod.spec.containers[0];

/** A probe's or Service's port as the container port number it names. */
function containerPort(port: string | number): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports.find((p: { name?: string }) => p.name === port)?.containerPort;
}

/** The Dockerfile as instructions: continuation lines joined, comments dropped. */
const dockerfile = readFileSync(join(deployDir, 'Dockerfile'), 'utf8')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => {
    const [instruction = '', ...rest] = line.split(/\s+/);
    return { instruction: instruction.toUpperCase(), args: rest.join(' ') };
  });
/** The instructions of the last (runtime) stage. */
const runtimeStage = dockerfile.slice(dockerfile.map((i) => i.instruction).lastIndexOf('FROM'));
const dockerArgs = (instruction: string) =>
  runtimeStage.filter((i) => i.instruction === instruction).map((i) => i.args);
const dockerEnv: Record<string, string> = Object.fromEntries(
  dockerArgs('ENV').flatMap((args) =>
    [...args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)].map(([, name, value]) => [
      name as string,
      (value as string).replace(/^"|"$/g, ''),
    ]),
  ),
);

describe('deploy/', () => {
  it('has the expected manifests, all valid YAML and namespace-less', () => {
    expect(files.map((file) => relative(deployDir, file)).sort()).toEqual([
      'kube-apiserver/webhook-kubeconfig.yaml',
      'kubernetes/configmap.yaml',
      'kubernetes/deployment.yaml',
      'kubernetes/kustomization.yaml',
      'kubernetes/pdb.yaml',
      'kubernetes/secret.example.yaml',
      'kubernetes/service.yaml',
    ]);
    for (const { file, manifest } of documents) {
      expect(manifest.metadata?.namespace, file).toBeUndefined();
      if (manifest.kind !== 'Kustomization' && manifest.kind !== 'Config')
        expect(manifest.metadata?.name, file).toMatch(/^idgate(-|$)/);
    }
    expect(kustomization.namespace).toBeUndefined();
  });

  it('sets only variables the server (or Node.js) reads', () => {
    const names = [
      ...Object.keys(configMap.data ?? {}),
      ...Object.keys(secret.stringData ?? {}),
      ...Object.keys(secret.data ?? {}),
      ...(container.env ?? []).map((variable: { name: string }) => variable.name),
    ];
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      expect(IDGATE_VARIABLES.has(name) || NODE_VARIABLES.has(name), `${name} is not read by idgate`).toBe(
        true,
      );
    }
    // The database URL and the key-sealing secret are secrets, not config map entries.
    expect(Object.keys(secret.stringData).sort()).toEqual(['IDGATE_DATABASE_URL', 'IDGATE_SECRET']);
    expect(Object.keys(configMap.data)).not.toContain('IDGATE_SECRET');
    expect(Object.keys(configMap.data)).not.toContain('IDGATE_DATABASE_URL');
    expect(Object.keys(configMap.data)).toEqual(
      expect.arrayContaining(['IDGATE_ISSUER', 'IDGATE_LOG_LEVEL', 'IDGATE_TRUST_PROXY']),
    );
  });

  it('takes its environment from the ConfigMap and Secret defined here', () => {
    expect(container.envFrom).toEqual([
      { configMapRef: { name: configMap.metadata?.name } },
      { secretRef: { name: secret.metadata?.name } },
    ]);
    expect(configMap.metadata?.name).toBe('idgate-config');
    expect(secret.metadata?.name).toBe('idgate-secrets');
    // Service links would inject IDGATE_PORT=tcp://…, which idgate reads as its port.
    expect(pod.spec.enableServiceLinks).toBe(false);
  });

  it('has a ConfigMap and example Secret that together are a valid configuration', () => {
    const env = { ...configMap.data, ...secret.stringData } as Record<string, string>;
    for (const value of Object.values(env)) expect(typeof value).toBe('string');
    const config = loadConfig({ env });
    expect(config.port).toBe(containerPort('http'));
    expect(config.issuer).toMatch(/^https:\/\/.+\/oauth$/);
    // Only the ingress's X-Forwarded-For is believed, never any client's.
    expect(config.trustProxy).toEqual(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']);
    // Several replicas share one database and one secret: SQLite cannot be shared.
    expect(config.database.url).toMatch(/^postgres(ql)?:\/\//);
    expect(config.secret?.length).toBeGreaterThanOrEqual(32);
  });

  it('marks the Secret as an example with placeholders', () => {
    const text = readFileSync(join(kubernetesDir, 'secret.example.yaml'), 'utf8');
    expect(text).toMatch(/EXAMPLE ONLY/);
    for (const value of Object.values(secret.stringData)) expect(value).toContain('CHANGE-ME');
  });

  it('probes /readyz and /healthz on the container port the Service targets', () => {
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
      if (probe === undefined) continue;
      expect(containerPort(probe.httpGet.port)).toBe(8080);
    }
    expect(service.spec.type).toBe('ClusterIP');
    expect(service.spec.ports).toHaveLength(1);
    expect(service.spec.ports[0].port).toBe(80);
    expect(containerPort(service.spec.ports[0].targetPort)).toBe(8080);
    expect(Number(pod.metadata.annotations['prometheus.io/port'])).toBe(8080);
  });

  it('selects the same pods everywhere', () => {
    const selector = deployment.spec.selector.matchLabels as Record<string, string>;
    expect(Object.keys(selector).length).toBeGreaterThan(0);
    expect(pod.metadata.labels).toMatchObject(selector);
    expect(service.spec.selector).toEqual(selector);
    expect(pdb.spec.selector.matchLabels).toEqual(selector);
    const antiAffinity = pod.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    expect(antiAffinity).toHaveLength(1);
    expect(antiAffinity[0].podAffinityTerm.topologyKey).toBe('kubernetes.io/hostname');
    expect(antiAffinity[0].podAffinityTerm.labelSelector.matchLabels).toEqual(selector);
  });

  it('keeps replicas serving through rollouts and disruptions', () => {
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.strategy).toMatchObject({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0 },
    });
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.spec.minAvailable).toBeGreaterThanOrEqual(1);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
  });

  it('runs non-root on a read-only root filesystem with a writable /tmp, within 256Mi', () => {
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    const tmp = container.volumeMounts.find((mount: { mountPath: string }) => mount.mountPath === '/tmp');
    expect(
      pod.spec.volumes.find((volume: { name: string }) => volume.name === tmp?.name)?.emptyDir,
    ).toBeDefined();
    expect(container.resources.limits.memory).toBe('256Mi');
    expect(container.resources.requests).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });
    expect(container.args).toEqual(['serve']);
  });

  it('lists every manifest in the kustomization, and never the example Secret', () => {
    const manifests = readdirSync(kubernetesDir).filter(
      (file) => /\.ya?ml$/.test(file) && file !== 'kustomization.yaml' && !file.includes('.example.'),
    );
    expect([...kustomization.resources].sort()).toEqual(manifests.sort());
    for (const resource of kustomization.resources)
      expect(existsSync(join(kubernetesDir, resource))).toBe(true);
    expect(kustomization.images).toEqual([expect.objectContaining({ name: container.image })]);
  });

  it('runs the server with the same memory tuning in the image, `pnpm start`, Kubernetes and the benchmark', () => {
    expect(dockerEnv).toMatchObject(MALLOC_ENV);
    // The Deployment keeps the image's entrypoint, and with it the Node.js flags.
    expect(container.command).toBeUndefined();
    const start = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts.start;
    const malloc = Object.entries(MALLOC_ENV).map(([name, value]) => `${name}=${value}`);
    expect(start).toContain(
      `&& ${[...malloc, 'node', ...NODE_FLAGS].join(' ')} apps/server/dist/bin.js serve`,
    );
    const bench = readFileSync(join(root, 'bench/src/cli.mjs'), 'utf8');
    expect(bench).toContain(
      `const IDGATE_NODE_FLAGS = [${NODE_FLAGS.map((flag) => `'${flag}'`).join(', ')}];`,
    );
    expect(bench).toContain(
      `const IDGATE_MALLOC_ENV = { ${malloc.map((pair) => pair.replace('=', ": '")).join("', ")}' };`,
    );
  });

  it('builds an image that matches: port, entrypoint, non-root user, Node.js 22', () => {
    const from = dockerArgs('FROM');
    expect(from).toHaveLength(1);
    expect(from[0]).toMatch(/^\$\{RUNTIME_IMAGE\} AS runtime$/);
    // Base images are build arguments, so that a build can pin them by digest (tag@sha256:…).
    const bases = dockerfile.filter((i) => i.instruction === 'FROM').map((i) => i.args.split(' ')[0]);
    expect(bases.map((base) => /^\$\{(\w+)\}$/.exec(base ?? '')?.[1])).toEqual([
      'BUILD_IMAGE',
      'RUNTIME_IMAGE',
    ]);
    const baseArgs = dockerfile.filter((i) => i.instruction === 'ARG').map((i) => i.args);
    expect(baseArgs).toEqual(
      expect.arrayContaining(['BUILD_IMAGE=node:22-bookworm', 'RUNTIME_IMAGE=node:22-bookworm-slim']),
    );
    // pnpm in the image is the workspace's own (packageManager), not whatever 10.x is newest.
    const packageManager = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager: string }
    ).packageManager;
    expect(dockerfile.map((i) => i.args)).toContain(`npm install --global ${packageManager}`);
    expect(dockerArgs('EXPOSE')).toEqual([String(containerPort('http'))]);
    expect(JSON.parse(dockerArgs('ENTRYPOINT')[0] as string)).toEqual(['node', ...NODE_FLAGS, 'dist/bin.js']);
    expect(JSON.parse(dockerArgs('CMD')[0] as string)).toEqual(container.args);
    const user = dockerArgs('USER').at(-1);
    expect(user).toBeDefined();
    expect((user as string).split(':')[0]).not.toMatch(/^(root|0)$/);
    expect(Number((user as string).split(':')[0])).toBe(pod.spec.securityContext.runAsUser);
    expect(dockerArgs('WORKDIR')).toEqual(['/app']);
    expect(dockerEnv).toMatchObject({ IDGATE_HOST: '0.0.0.0', IDGATE_PORT: '8080' });
    // The image's own defaults are a valid configuration (SQLite in the data directory).
    const config = loadConfig({ env: dockerEnv });
    expect(config.database.url).toBe('sqlite:/var/lib/idgate/idgate.db');
    for (const name of Object.keys(dockerEnv))
      expect(IDGATE_VARIABLES.has(name) || NODE_VARIABLES.has(name), name).toBe(true);
    // The build context is the repository root; its ignore file keeps host builds out.
    const ignore = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    expect(ignore).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git']));
  });

  it('points the kube-apiserver webhook at /oauth/authenticate with an API key', () => {
    const cluster = kubeconfig.clusters[0].cluster;
    expect(cluster.server).toMatch(/^https:\/\/.+\/oauth\/authenticate$/);
    // The issuer's host: the webhook and the tokens it reviews are the same server.
    expect(cluster.server).toBe(`${configMap.data.IDGATE_ISSUER}/authenticate`);
    expect(kubeconfig.users[0].user.token).toMatch(/^idg_/);
    const context = kubeconfig.contexts.find(
      (c: { name: string }) => c.name === kubeconfig['current-context'],
    );
    expect(context?.context).toEqual({
      cluster: kubeconfig.clusters[0].name,
      user: kubeconfig.users[0].name,
    });
  });

  it('documents the keys, the kube-apiserver flags and the move to PostgreSQL', () => {
    const readme = readFileSync(join(deployDir, 'README.md'), 'utf8');
    for (const key of [...Object.keys(configMap.data), ...Object.keys(secret.stringData)])
      expect(readme, key).toContain(key);
    for (const text of [
      '--authentication-token-webhook-config-file',
      '--authentication-token-webhook-version=v1',
      '--authentication-token-webhook-cache-ttl',
      'idgate migrate',
      'docker build -f deploy/Dockerfile',
    ]) {
      expect(readme).toContain(text);
    }
  });
});

describe('deploy/ against a running server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(testDatabaseUrls()[0] as NonNullable<ReturnType<typeof testDatabaseUrls>[0]>);
  });
  afterAll(async () => t?.close());

  it('answers the probe and scrape paths', async () => {
    const paths = [
      container.readinessProbe.httpGet.path,
      container.livenessProbe.httpGet.path,
      container.startupProbe.httpGet.path,
      pod.metadata.annotations['prometheus.io/path'],
    ];
    for (const path of paths) {
      const response = await fetch(`${t.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
    }
  });
});
