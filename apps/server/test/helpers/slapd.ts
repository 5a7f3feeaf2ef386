import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'ldapts';
import { stopWhenTestEnds } from './child-processes.js';
import { LDAP_SCHEMA_DIR, toolPath } from './tools.js';

const run = promisify(execFile);

/**
 * slapd as the run found it (`tools.ts`: IDGATE_TEST_SLAPD, /usr/sbin/slapd, PATH), with slapadd
 * and slappasswd beside it; undefined when it is not installed: the LDAP tests then skip
 * (`describe.skipIf(!hasSlapd)`).
 */
const SLAPD = toolPath('slapd');
/** Whether slapd was found: the tests that start one skip without it. */
export const hasSlapd = SLAPD !== undefined;
const SCHEMA_DIR = LDAP_SCHEMA_DIR;
const sibling = (name: string) => join(dirname(SLAPD ?? ''), name);
const MODULE_DIR = '/usr/lib/ldap';

export const BASE_DN = 'dc=idgate,dc=test';
export const PEOPLE_DN = `ou=people,${BASE_DN}`;
export const GROUPS_DN = `ou=groups,${BASE_DN}`;

/** A seeded user: `uid` is also the RDN, `password` is stored hashed ({SSHA}). */
export interface SeedUser {
  uid: string;
  password: string;
  cn: string;
  sn: string;
  mail: string;
  employeeNumber?: string;
}

/**
 * The people in the throwaway directory. carol and dave share a mail address, so a filter on
 * `mail` is ambiguous for them; only bob has an employeeNumber.
 */
export const SEED_USERS = {
  alice: {
    uid: 'alice',
    password: 'alice-pass',
    cn: 'Alice Liddell',
    sn: 'Liddell',
    mail: 'alice@idgate.test',
  },
  bob: {
    uid: 'bob',
    password: 'bob-pass',
    cn: 'Bob Builder',
    sn: 'Builder',
    mail: 'bob@idgate.test',
    employeeNumber: '1002',
  },
  star: { uid: 'star*(user)', password: 'star-pass', cn: 'Star User', sn: 'User', mail: 'star@idgate.test' },
  zoe: { uid: 'zoë', password: 'zoë-pass', cn: 'Zoë Ñandú', sn: 'Ñandú', mail: 'zoe@idgate.test' },
  carol: { uid: 'carol', password: 'carol-pass', cn: 'Carol', sn: 'C', mail: 'team@idgate.test' },
  dave: { uid: 'dave', password: 'dave-pass', cn: 'Dave', sn: 'D', mail: 'team@idgate.test' },
} satisfies Record<string, SeedUser>;

/** groupOfNames entries: cn → member uids. */
export const SEED_GROUPS: Record<string, string[]> = {
  admins: ['alice'],
  devs: ['alice', 'bob', 'star*(user)'],
};

export const userDn = (uid: string): string => `uid=${uid},${PEOPLE_DN}`;

/** Changes the directory as its manager (a test's edit behind idgate's back). */
export async function asManager(slapd: Slapd, change: (ldap: Client) => Promise<unknown>): Promise<void> {
  const ldap = new Client({ url: slapd.url });
  try {
    await ldap.bind(slapd.managerDn, slapd.managerPassword);
    await change(ldap);
  } finally {
    await ldap.unbind();
  }
}

/**
 * The `corp-ldap` identity provider over `slapd` that the LDAP tests register: manager bind,
 * people and groups searched, a 2 s timeout; `overrides` replace or add fields.
 * @example await addIdentityProvider(t, corpLdapProvider(slapd, { displayName: 'Corporate directory' }));
 */
export function corpLdapProvider(slapd: Slapd, overrides: Record<string, unknown> = {}) {
  return {
    type: 'ldap' as const,
    name: 'corp-ldap',
    url: slapd.url,
    bindDn: slapd.managerDn,
    bindPassword: slapd.managerPassword,
    userSearch: { baseDn: PEOPLE_DN },
    groupSearch: { baseDn: GROUPS_DN },
    timeoutMs: 2000,
    ...overrides,
  };
}

export interface Slapd {
  /** ldap://127.0.0.1:PORT (StartTLS is offered there when started with `tls`). */
  url: string;
  /** ldaps://127.0.0.1:PORT2, with `tls` only. */
  ldapsUrl?: string;
  /** PEM of the throwaway CA that signed the server certificate, with `tls` only. */
  caCertificate?: string;
  baseDn: string;
  managerDn: string;
  managerPassword: string;
  /** Kills slapd, keeping its files: connections to its ports are refused until {@link up}. */
  down(): Promise<void>;
  /** Starts slapd again on the same ports over the same directory, once it answers. */
  up(): Promise<void>;
  /** Kills slapd (SIGTERM, then SIGKILL) and removes its files. */
  stop(): Promise<void>;
}

/**
 * Starts a throwaway OpenLDAP slapd (mdb backend, seeded people and groups) in the foreground as
 * a child of the test process, on free ports of 127.0.0.1. Started in a test, it is stopped when
 * the test ends, passed or failed; started in a `beforeAll`, the file's `afterAll` stops it.
 * @example
 * const slapd = await startSlapd({ tls: true });
 * try { ... } finally { await slapd.stop(); }
 */
export async function startSlapd(options: { tls?: boolean } = {}): Promise<Slapd> {
  if (SLAPD === undefined) {
    throw new Error(
      'OpenLDAP is not installed: run `apt-get install slapd ldap-utils` (.ci/run installs it), or skip with `describe.skipIf(!hasSlapd)`',
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'idgate-slapd-'));
  try {
    const managerPassword = 'manager-secret';
    await mkdir(join(dir, 'data'));
    const tls = options.tls === true ? await makeCertificates(dir) : undefined;
    const conf = join(dir, 'slapd.conf');
    await writeFile(conf, await slapdConf(dir, managerPassword, tls !== undefined));
    await writeFile(join(dir, 'seed.ldif'), await seedLdif());
    await run(sibling('slapadd'), ['-q', '-f', conf, '-l', join(dir, 'seed.ldif')]);

    let lastError: unknown;
    // A free port can be taken between finding and binding it: try again with new ones.
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const ldapsPort = tls !== undefined ? await freePort() : undefined;
      const url = `ldap://127.0.0.1:${port}`;
      const ldapsUrl = ldapsPort !== undefined ? `ldaps://127.0.0.1:${ldapsPort}` : undefined;
      // -d keeps slapd in the foreground, a child of this process; -d 0 logs nothing but errors.
      const listeners = `${url}/${ldapsUrl !== undefined ? ` ${ldapsUrl}/` : ''}`;
      const launch = () => runSlapd(conf, listeners, url, `cn=admin,${BASE_DN}`, managerPassword);
      let stopChild: () => Promise<void>;
      try {
        stopChild = await launch();
      } catch (error) {
        lastError = error;
        continue;
      }
      const slapd: Slapd = {
        url,
        ...(ldapsUrl !== undefined ? { ldapsUrl } : {}),
        ...(tls !== undefined ? { caCertificate: tls.caCertificate } : {}),
        baseDn: BASE_DN,
        managerDn: `cn=admin,${BASE_DN}`,
        managerPassword,
        async down() {
          await stopChild();
        },
        async up() {
          await stopChild();
          stopChild = await launch();
        },
        async stop() {
          await stopChild();
          await rm(dir, { recursive: true, force: true });
        },
      };
      stopWhenTestEnds(slapd.stop);
      return slapd;
    }
    throw lastError;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function slapdConf(dir: string, managerPassword: string, tls: boolean): Promise<string> {
  const schemas = ['core', 'cosine', 'inetorgperson', 'nis'].map(
    (name) => `include ${SCHEMA_DIR}/${name}.schema`,
  );
  return [
    ...schemas,
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    `modulepath ${MODULE_DIR}`,
    'moduleload back_mdb',
    // Unauthenticated binds (a DN with an empty password, RFC 4513 §5.1.2) succeed as anonymous,
    // as some directories allow: the connector's empty-password guard is tested against that.
    'allow bind_anon_dn',
    ...(tls
      ? [
          `TLSCACertificateFile ${join(dir, 'ca.pem')}`,
          `TLSCertificateFile ${join(dir, 'server.pem')}`,
          `TLSCertificateKeyFile ${join(dir, 'server.key')}`,
        ]
      : []),
    'database mdb',
    'maxsize 16777216',
    `suffix "${BASE_DN}"`,
    `rootdn "cn=admin,${BASE_DN}"`,
    `rootpw ${await hash(managerPassword)}`,
    `directory ${join(dir, 'data')}`,
    'access to attrs=userPassword by anonymous auth by * none',
    'access to * by * read',
    '',
  ].join('\n');
}

async function seedLdif(): Promise<string> {
  const entries: string[][] = [
    [`dn: ${BASE_DN}`, 'objectClass: dcObject', 'objectClass: organization', 'dc: idgate', 'o: idgate test'],
    [`dn: ${PEOPLE_DN}`, 'objectClass: organizationalUnit', 'ou: people'],
    [`dn: ${GROUPS_DN}`, 'objectClass: organizationalUnit', 'ou: groups'],
  ];
  for (const user of Object.values(SEED_USERS) as SeedUser[]) {
    entries.push([
      ldif('dn', userDn(user.uid)),
      'objectClass: inetOrgPerson',
      ldif('uid', user.uid),
      ldif('cn', user.cn),
      ldif('sn', user.sn),
      ldif('mail', user.mail),
      ...(user.employeeNumber !== undefined ? [ldif('employeeNumber', user.employeeNumber)] : []),
      ldif('userPassword', await hash(user.password)),
    ]);
  }
  for (const [cn, members] of Object.entries(SEED_GROUPS)) {
    entries.push([
      `dn: cn=${cn},${GROUPS_DN}`,
      'objectClass: groupOfNames',
      `cn: ${cn}`,
      ...members.map((uid) => ldif('member', userDn(uid))),
    ]);
  }
  return `${entries.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/** An LDIF line, base64 (`::`) for values that are not plain ASCII. */
function ldif(attribute: string, value: string): string {
  return /^[\x21-\x39\x3b\x3d-\x7e][\x20-\x7e]*$/.test(value)
    ? `${attribute}: ${value}`
    : `${attribute}:: ${Buffer.from(value).toString('base64')}`;
}

async function hash(password: string): Promise<string> {
  const { stdout } = await run(sibling('slappasswd'), ['-h', '{SSHA}', '-s', password]);
  return stdout.trim();
}

/** A throwaway CA and a server certificate for 127.0.0.1 and localhost. */
async function makeCertificates(dir: string): Promise<{ caCertificate: string }> {
  const file = (name: string): string => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  // biome-ignore format: openssl arguments read best in pairs
  await run('openssl', [
    'req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2',
    '-subj', '/CN=idgate test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  // biome-ignore format: openssl arguments read best in pairs
  await run('openssl', [
    'req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1',
  ]);
  await writeFile(
    file('server.ext'),
    [
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
    ].join('\n'),
  );
  // biome-ignore format: openssl arguments read best in pairs
  await run('openssl', [
    'x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'),
    '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext'),
  ]);
  return { caCertificate: await readFile(file('ca.pem'), 'utf8') };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

/**
 * Runs slapd in the foreground on `listeners` until it answers a manager bind; answers how to
 * stop it (SIGTERM, then SIGKILL), which does nothing once it has stopped.
 */
async function runSlapd(
  conf: string,
  listeners: string,
  url: string,
  managerDn: string,
  managerPassword: string,
): Promise<() => Promise<void>> {
  const child = spawn(SLAPD as string, ['-d', '0', '-f', conf, '-h', listeners], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const stop = async (): Promise<void> => {
    await killChild(child);
    process.removeListener('exit', killOnExit);
  };
  try {
    await waitUntilAnswering(child, url, managerDn, managerPassword, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

/** Polls with a manager bind until slapd answers; fails early when it exits. */
async function waitUntilAnswering(
  child: ChildProcess,
  url: string,
  dn: string,
  password: string,
  stderr: () => string,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`slapd exited (${child.exitCode ?? child.signalCode}): ${stderr().trim()}`);
    }
    const client = new Client({ url, connectTimeout: 1_000, timeout: 1_000 });
    try {
      await client.bind(dn, password);
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`slapd did not answer on ${url} within 15 s: ${stderr().trim()}`, { cause: error });
      }
    } finally {
      await client.unbind().catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}
