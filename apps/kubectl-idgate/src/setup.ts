import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { type Document, isMap, isSeq, parseDocument, type YAMLMap, YAMLSeq } from 'yaml';
import { clusterAudience, type SetupArgs } from './args.js';
import { TokenCache } from './cache.js';
import { PluginError } from './errors.js';

/**
 * The exec API version written into kubeconfigs: `v1beta1` is understood by every kubectl since
 * 1.11, while `v1` needs 1.22 (Debian's kubectl 1.20 refuses it with `invalid apiVersion`). kubectl
 * sends the plugin the version it was configured with, and the plugin answers in it.
 */
export const KUBECONFIG_EXEC_API_VERSION = 'client.authentication.k8s.io/v1beta1';

/** The kubeconfig `setup` edits: `--kubeconfig`, else the first file of `KUBECONFIG`, else `~/.kube/config`. */
export function kubeconfigPath(explicit: string | undefined, env: NodeJS.ProcessEnv): string {
  if (explicit !== undefined) return resolve(explicit);
  const first = env.KUBECONFIG?.split(delimiter).find((path) => path !== '');
  return first === undefined ? join(homedir(), '.kube', 'config') : resolve(first);
}

/**
 * Adds (or replaces, by name) the cluster, a user whose credentials come from this plugin, and a
 * context tying them, then makes the context current. Every other entry, comment and field of the
 * file is kept. The cluster is remembered in the token cache (`--cache-dir`), so that the next
 * sign-in at the issuer asks for it along with the others.
 * @returns the path written and the context name.
 */
export async function setup(
  args: SetupArgs,
  env: NodeJS.ProcessEnv,
): Promise<{ path: string; context: string }> {
  const path = kubeconfigPath(args.kubeconfig, env);
  const contextName = args.context ?? args.cluster;
  const userName = `idgate-${args.cluster}`;

  const cluster: Record<string, unknown> = { server: args.server };
  if (args.certificateAuthority !== undefined) {
    let pem: Buffer;
    try {
      pem = await readFile(args.certificateAuthority);
    } catch (error) {
      throw new PluginError(
        `cannot read the certificate authority ${args.certificateAuthority}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      );
    }
    if (!pem.toString('utf8').includes('-----BEGIN CERTIFICATE-----')) {
      throw new PluginError(`${args.certificateAuthority} is not a PEM certificate`);
    }
    cluster['certificate-authority-data'] = pem.toString('base64');
  }
  const execArgs = [
    'get-token',
    '--issuer',
    args.issuer,
    '--client-id',
    args.clientId,
    '--cluster',
    args.cluster,
  ];
  if (args.cacheDir !== undefined) execArgs.push('--cache-dir', resolve(args.cacheDir));
  if (args.device) execArgs.push('--device');
  const user = {
    exec: {
      apiVersion: KUBECONFIG_EXEC_API_VERSION,
      command: args.execCommand,
      args: execArgs,
      // honoured by kubectl ≥ 1.22, ignored by older ones (their kubeconfig decoding drops unknown fields)
      interactiveMode: 'IfAvailable',
      provideClusterInfo: false,
    },
  };

  let text = '';
  let mode = 0o600;
  try {
    text = await readFile(path, 'utf8');
    mode = (await stat(path)).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new PluginError(
        `cannot read the kubeconfig ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      );
    }
  }
  const document = parseDocument(text) as unknown as Document;
  if (document.errors.length > 0) {
    throw new PluginError(
      `the kubeconfig ${path} is not valid YAML: ${document.errors[0]?.message.split('\n')[0]}`,
    );
  }
  if (document.contents === null)
    document.contents = document.createNode({ apiVersion: 'v1', kind: 'Config' });
  const root = document.contents;
  if (!isMap(root)) throw new PluginError(`the kubeconfig ${path} is not a YAML mapping`);
  if (!root.has('apiVersion')) root.set('apiVersion', 'v1');
  if (!root.has('kind')) root.set('kind', 'Config');

  upsert(document, root, 'clusters', args.cluster, 'cluster', cluster, path);
  upsert(document, root, 'users', userName, 'user', user, path);
  upsert(document, root, 'contexts', contextName, 'context', { cluster: args.cluster, user: userName }, path);
  root.set('current-context', contextName);

  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, document.toString(), { mode, flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw new PluginError(
      `cannot write the kubeconfig ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  // The next sign-in at this issuer asks for this cluster too, so that one sign-in serves it.
  const cache = await TokenCache.open(args.cacheDir);
  await cache.locked(args.issuer, args.clientId, () =>
    cache.rememberClusters(args.issuer, args.clientId, [clusterAudience(args.cluster)]),
  );
  return { path, context: contextName };
}

/** Sets the entry `name` of the list `list` (`clusters`, `users`, `contexts`) to `{ name, [field]: value }`. */
function upsert(
  document: Document,
  root: YAMLMap<unknown, unknown>,
  list: string,
  name: string,
  field: string,
  value: unknown,
  path: string,
): void {
  let seq: unknown = root.get(list, true);
  if (
    seq === undefined ||
    seq === null ||
    (typeof seq === 'object' && 'value' in seq && seq.value === null)
  ) {
    seq = new YAMLSeq();
    root.set(list, seq);
  }
  if (!isSeq(seq)) throw new PluginError(`the kubeconfig ${path} has a "${list}" that is not a list`);
  const node = document.createNode({ name, [field]: value });
  const index = seq.items.findIndex((item) => isMap(item) && item.get('name') === name);
  if (index === -1) seq.items.push(node);
  else seq.items[index] = node;
}
