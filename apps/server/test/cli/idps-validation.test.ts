import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, envFor, errorLines, openTestServices, runInProcess, tempSqlite } from './support.js';

beforeAll(assertBuilt);

const SECRET_INPUT = 'never-shown-9f86d081884c7d659a2feaa0c55ad015';
const OIDC = ['idps', 'add', '--name', 'corp', '--type', 'oidc', '--client-id', 'x', '--client-secret-stdin'];
const LDAP = ['idps', 'add', '--name', 'corp', '--type', 'ldap', '--url', 'ldap://ldap.example.com'];

let db: Awaited<ReturnType<typeof tempSqlite>>;
let env: Record<string, string>;
beforeEach(async () => {
  db = await tempSqlite();
  env = envFor(db.url);
  expect((await runInProcess(['migrate'], { env })).code).toBe(0);
});
afterEach(async () => {
  await db.remove();
});

async function storedCount(): Promise<number> {
  const services = await openTestServices(db.url);
  try {
    return (await services.storage.identityProviders.list()).length;
  } finally {
    await services.close();
  }
}

describe('idgate idps add validation', () => {
  it.each([
    [['idps', 'add', '--type', 'github'], 'idps add needs --name and --type, or --from-file'],
    [['idps', 'add', '--name', 'x'], 'idps add needs --name and --type, or --from-file'],
    [
      [...OIDC.slice(0, 2), '--name', 'Corp', ...OIDC.slice(4), '--issuer', 'https://sso.example.com'],
      '--name "Corp": must be lower-case letters, digits and -, starting with a letter',
    ],
    [OIDC, '--issuer is required for --type oidc'],
    [[...OIDC, '--issuer', 'sso.example.com'], '--issuer "sso.example.com": Invalid URL'],
    [
      [...OIDC, '--issuer', 'https://sso.example.com', '--scope', 'openid', ''],
      '--scope: Too small: expected string to have >=1 characters',
    ],
    [
      [...OIDC, '--issuer', 'https://s.example.com', '--api-url', 'https://x'],
      '--api-url does not apply to --type oidc',
    ],
    [
      ['idps', 'add', '--name', 'gh', '--type', 'github', '--client-id', 'x'],
      '--type github needs --client-secret-stdin (the client secret is read from stdin)',
    ],
    [[...LDAP, '--client-id', 'x'], '--client-id does not apply to --type ldap'],
    [LDAP, '--user-base-dn is required for --type ldap'],
    [
      [...LDAP.slice(0, 6), '--url', 'https://ldap.example.com', '--user-base-dn', 'dc=x'],
      '--url "https://ldap.example.com": must be ldap://host[:port] or ldaps://host[:port]',
    ],
    [
      [...LDAP, '--user-base-dn', 'dc=x', '--timeout-ms', '5s'],
      '--timeout-ms "5s": must be a whole number of milliseconds',
    ],
    [
      [...LDAP, '--user-base-dn', 'dc=x', '--timeout-ms', '50'],
      '--timeout-ms 50: Too small: expected number to be >=100',
    ],
    [
      [...LDAP, '--user-base-dn', 'dc=x', '--bind-dn', 'cn=admin'],
      '--bind-dn and --bind-password-stdin go together (omit both for an anonymous bind)',
    ],
    [
      [...LDAP, '--user-base-dn', 'dc=x', '--ca-file', '/nonexistent/ca.pem'],
      '--ca-file /nonexistent/ca.pem: cannot be read (ENOENT)',
    ],
    [['idps', 'add', '--from-file', 'x.json', '--name', 'y'], '--from-file cannot be combined with --name'],
    [
      ['idps', 'add', '--from-file', '/nonexistent/p.json'],
      '--from-file /nonexistent/p.json: cannot be read (ENOENT)',
    ],
    [['idps', 'add', '--from-file', 'p.txt'], '--from-file p.txt: must be a .json, .yaml or .yml file'],
  ])('%j fails with one line: %s', async (args, message) => {
    const result = await runInProcess(args, { env, input: `${SECRET_INPUT}\n` });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(errorLines(result.stderr)).toEqual([`idgate: ${message}`]);
    expect(await storedCount()).toBe(0);
  });

  it('refuses an empty secret on stdin, and a too long one without repeating it', async () => {
    const empty = await runInProcess([...OIDC, '--issuer', 'https://sso.example.com'], { env, input: '\n' });
    expect(empty).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'idgate: the client secret read from stdin is empty\n',
    });
    const long = 'x'.repeat(4097);
    const tooLong = await runInProcess([...OIDC, '--issuer', 'https://sso.example.com'], {
      env,
      input: long,
    });
    expect(tooLong).toMatchObject({ code: 1, stdout: '' });
    expect(tooLong.stderr).toBe(
      'idgate: --client-secret-stdin: Too big: expected string to have <=4096 characters\n',
    );
  });

  it('leaves unknown types and mappings to commander (usage error, exit 2)', async () => {
    const type = await runInProcess(['idps', 'add', '--name', 'x', '--type', 'saml'], { env });
    expect(type.code).toBe(2);
    expect(type.stderr).toContain("argument 'saml' is invalid");
    const mapping = await runInProcess([...OIDC, '--mapping', 'create'], { env });
    expect(mapping.code).toBe(2);
  });

  it('names the field of a bad file, never a secret of it', async () => {
    const file = (name: string, text: string) => {
      const path = join(db.dir, name);
      return writeFile(path, text).then(() => path);
    };
    const cases: Array<[string, string]> = [
      [
        await file(
          'extra.json',
          JSON.stringify({ type: 'gitlab', name: 'gl', clientId: 'x', clientSecret: SECRET_INPUT, extra: 1 }),
        ),
        'unknown field extra',
      ],
      [await file('missing.yml', 'type: gitlab\nname: gl\nclientId: x\n'), 'clientSecret is required'],
      [
        await file('type.yaml', `type: saml\nname: gl\nclientSecret: ${SECRET_INPUT}\n`),
        'type "saml": must be one of oidc, github, gitlab, ldap',
      ],
      [
        await file(
          'long.json',
          JSON.stringify({ type: 'gitlab', name: 'gl', clientId: 'x', clientSecret: 'x'.repeat(5000) }),
        ),
        'clientSecret: Too big: expected string to have <=4096 characters',
      ],
    ];
    for (const [path, message] of cases) {
      const result = await runInProcess(['idps', 'add', '--from-file', path], { env });
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(errorLines(result.stderr)).toEqual([`idgate: ${path}: ${message}`]);
      expect(result.stderr).not.toContain(SECRET_INPUT);
    }
    const broken = await file('broken.yaml', `clientSecret: "${SECRET_INPUT}\ntype: [`);
    const result = await runInProcess(['idps', 'add', '--from-file', broken], { env });
    expect(errorLines(result.stderr)).toEqual([`idgate: --from-file ${broken}: is not valid YAML`]);
    expect(await storedCount()).toBe(0);
  });
});
