import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { DEFAULT_OIDC_SCOPES, type DescribeIssueOptions, type IdentityProviderConfig } from '@idgate/schema';
import { type Command, Option } from 'commander';
import { CliError, collect, optionLabels, readSecretFromStdin } from './context.js';

type ProviderType = IdentityProviderConfig['type'];
const TYPES = ['oidc', 'github', 'gitlab', 'ldap'] as const satisfies readonly ProviderType[];
const OAUTH: readonly ProviderType[] = ['oidc', 'github', 'gitlab'];

/** The options of `idps add` that describe a provider, and the types each applies to (all when absent). */
const OPTIONS: ReadonlyArray<{ option: Option; types?: readonly ProviderType[] }> = [
  { option: new Option('--name <name>', 'lower-case letters, digits and -; the callback path segment') },
  { option: new Option('--type <type>', 'the kind of provider').choices(TYPES) },
  { option: new Option('--display-name <text>', 'what the login page shows (default: the name)') },
  {
    option: new Option('--mapping <method>', 'how identities become users (default: auto)').choices([
      'auto',
      'lookup',
      'manual',
    ]),
  },
  {
    option: new Option(
      '--link-by-verified-email',
      'sign in users whose email the provider verified (default: off)',
    ),
  },
  {
    option: new Option(
      '--token-client <client_id>',
      'the client tokens answered from the callback go to; it must exist and take user sign-ins (default: federation.tokenClientId)',
    ),
  },
  { option: new Option('--groups-prefix <prefix>', 'put before every upstream group (default: <name>:)') },
  { option: new Option('--issuer <url>', 'the upstream issuer (discovery)'), types: ['oidc'] },
  { option: new Option('--client-id <id>', 'the client id at the provider'), types: OAUTH },
  { option: new Option('--client-secret-stdin', 'read the client secret from stdin'), types: OAUTH },
  {
    option: new Option(
      '--scope <scope...>',
      `scopes to request (repeatable; default: ${DEFAULT_OIDC_SCOPES.join(' ')})`,
    ),
    types: ['oidc'],
  },
  { option: new Option('--username-claim <claim>', 'default: preferred_username'), types: ['oidc'] },
  { option: new Option('--email-claim <claim>', 'default: email'), types: ['oidc'] },
  { option: new Option('--groups-claim <claim>', 'default: groups'), types: ['oidc'] },
  { option: new Option('--name-claim <claim>', 'default: name'), types: ['oidc'] },
  { option: new Option('--use-userinfo', 'also read the userinfo endpoint (default: off)'), types: ['oidc'] },
  {
    option: new Option(
      '--trust-upstream-mfa <value>',
      'an upstream amr or acr value (from its verified ID token) that counts as a second factor, e.g. mfa, hwk (repeatable; default: none)',
    ).argParser(collect),
    types: ['oidc'],
  },
  {
    option: new Option(
      '--trust-email-verified',
      "put the provider's verified email into tokens as email_verified: true (default: off)",
    ),
    types: OAUTH,
  },
  {
    option: new Option(
      '--base-url <url>',
      'the GitHub or GitLab host (default: https://github.com, https://gitlab.com)',
    ),
    types: ['github', 'gitlab'],
  },
  {
    option: new Option('--api-url <url>', 'the GitHub REST API (default: https://api.github.com)'),
    types: ['github'],
  },
  {
    option: new Option(
      '--allowed-org <org>',
      'only members may sign in (repeatable; default: anyone)',
    ).argParser(collect),
    types: ['github'],
  },
  {
    option: new Option('--no-teams', 'do not load team memberships as groups (default: loaded)'),
    types: ['github'],
  },
  {
    option: new Option(
      '--allowed-group <group>',
      'only members may sign in (repeatable; default: anyone)',
    ).argParser(collect),
    types: ['gitlab'],
  },
  { option: new Option('--url <url>', 'ldap://host[:port] or ldaps://host[:port]'), types: ['ldap'] },
  { option: new Option('--start-tls', 'upgrade ldap:// with StartTLS (default: off)'), types: ['ldap'] },
  {
    option: new Option('--ca-file <file>', "PEM of the directory's CA (default: the system's)"),
    types: ['ldap'],
  },
  { option: new Option('--bind-dn <dn>', 'manager bind DN (default: anonymous)'), types: ['ldap'] },
  { option: new Option('--bind-password-stdin', 'read the bind password from stdin'), types: ['ldap'] },
  { option: new Option('--user-base-dn <dn>', 'where users are searched'), types: ['ldap'] },
  { option: new Option('--user-filter <filter>', 'default: (uid={username})'), types: ['ldap'] },
  { option: new Option('--username-attribute <attr>', 'default: uid'), types: ['ldap'] },
  { option: new Option('--email-attribute <attr>', 'default: mail'), types: ['ldap'] },
  { option: new Option('--name-attribute <attr>', 'default: cn'), types: ['ldap'] },
  { option: new Option('--id-attribute <attr>', 'default: entryUUID'), types: ['ldap'] },
  {
    option: new Option('--group-base-dn <dn>', 'where groups are searched (default: no groups)'),
    types: ['ldap'],
  },
  { option: new Option('--group-filter <filter>', 'default: (member={dn})'), types: ['ldap'] },
  { option: new Option('--group-name-attribute <attr>', 'default: cn'), types: ['ldap'] },
  { option: new Option('--timeout-ms <ms>', 'default: 5000'), types: ['ldap'] },
];

/** What `idps update` adds: a way back for each on/off option of `idps add`. */
const UPDATE_ONLY: ReadonlyArray<{ option: Option; types?: readonly ProviderType[] }> = [
  { option: new Option('--no-link-by-verified-email', 'stop signing in users by verified email') },
  { option: new Option('--no-use-userinfo', 'stop reading the userinfo endpoint'), types: ['oidc'] },
  {
    option: new Option('--no-trust-email-verified', "stop trusting the provider's verified email"),
    types: OAUTH,
  },
  { option: new Option('--teams', 'load team memberships as groups again'), types: ['github'] },
  { option: new Option('--no-start-tls', 'stop upgrading ldap:// with StartTLS'), types: ['ldap'] },
  {
    option: new Option(
      '--unset <option>',
      'put an optional setting back to its default, named by its option without -- (repeatable; e.g. --unset display-name)',
    ).argParser(collect),
  },
];

/** Options of `idps add` that `idps update` does not take: the name and type stay. */
const ADD_ONLY = new Set(['--name', '--type']);

/** Which option sets each configuration field, for errors that name what the user typed. */
const FIELD_OPTION_NAMES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(['name', 'type', 'issuer', 'url'].map((field) => [field, `--${field}`] as const)),
  displayName: '--display-name',
  mapping: '--mapping',
  tokenClientId: '--token-client',
  groupsPrefix: '--groups-prefix',
  clientId: '--client-id',
  clientSecret: '--client-secret-stdin',
  scopes: '--scope',
  'claims.username': '--username-claim',
  'claims.email': '--email-claim',
  'claims.groups': '--groups-claim',
  'claims.name': '--name-claim',
  baseUrl: '--base-url',
  apiUrl: '--api-url',
  allowedOrganizations: '--allowed-org',
  allowedGroups: '--allowed-group',
  trustUpstreamMfa: '--trust-upstream-mfa',
  trustEmailVerified: '--trust-email-verified',
  caCertificate: '--ca-file',
  bindDn: '--bind-dn',
  bindPassword: '--bind-password-stdin',
  timeoutMs: '--timeout-ms',
  userSearch: '--user-base-dn',
  'userSearch.baseDn': '--user-base-dn',
  'userSearch.filter': '--user-filter',
  'userSearch.usernameAttribute': '--username-attribute',
  'userSearch.emailAttribute': '--email-attribute',
  'userSearch.nameAttribute': '--name-attribute',
  'userSearch.idAttribute': '--id-attribute',
  'groupSearch.baseDn': '--group-base-dn',
  'groupSearch.filter': '--group-filter',
  'groupSearch.nameAttribute': '--group-name-attribute',
};
const FIELD_OPTIONS = optionLabels(FIELD_OPTION_NAMES);

/** `option` with the provider types it applies to added to its description. */
function described({ option, types }: { option: Option; types?: readonly ProviderType[] }): Option {
  const only = types === undefined ? '' : ` [${types.join(', ')}]`;
  const copy = new Option(option.flags, `${option.description}${only}`);
  if (option.argChoices !== undefined) copy.choices(option.argChoices);
  if (option.parseArg !== undefined) copy.argParser(option.parseArg);
  return copy;
}

/** Adds the provider options to `idps add`. */
export function addProviderOptions(command: Command): Command {
  for (const entry of OPTIONS) command.addOption(described(entry));
  return command.option('--from-file <file>', 'read one provider (JSON or YAML, secrets inline) instead');
}

/** Adds the provider options to `idps update`: those of `idps add` but the name and type, each optional. */
export function addProviderUpdateOptions(command: Command): Command {
  for (const entry of [...OPTIONS, ...UPDATE_ONLY])
    if (!ADD_ONLY.has(entry.option.long ?? '')) command.addOption(described(entry));
  return command;
}

/** The options the user typed on the command line (not defaults), by long flag. */
function typed(command: Command): Map<string, unknown> {
  const given = new Map<string, unknown>();
  for (const option of command.options) {
    const key = option.attributeName();
    if (command.getOptionValueSource(key) === 'cli' && option.long !== undefined)
      given.set(option.long, command.getOptionValue(key));
  }
  return given;
}

/** A provider as `idps add` was given it, and how to name its fields in an error. */
export interface ProviderInput {
  input: unknown;
  describe: Omit<DescribeIssueOptions, 'input' | 'secrets'>;
}

/**
 * The provider `idps add` describes, for the use case to check: from `--from-file`, or from the
 * options and the one secret read from stdin. Secrets never come from argv, which other users see
 * in `ps`. Errors name the option (or the file's field) that is wrong.
 * @throws CliError for options that do not go together, and a file that cannot be read.
 */
export async function providerFromCommand(
  command: Command,
  stdin: NodeJS.ReadableStream,
): Promise<ProviderInput> {
  const given = typed(command);
  given.delete('--json');
  const file = given.get('--from-file');
  if (typeof file === 'string') {
    given.delete('--from-file');
    const other = [...given.keys()][0];
    if (other !== undefined) throw new CliError(`--from-file cannot be combined with ${other}`);
    return {
      input: await readProviderFile(file),
      describe: { label: (path) => (path === '' ? file : `${file}: ${path}`) },
    };
  }
  const type = given.get('--type') as ProviderType | undefined;
  if (given.get('--name') === undefined || type === undefined)
    throw new CliError('idps add needs --name and --type, or --from-file');
  for (const { option, types } of OPTIONS) {
    if (types !== undefined && option.long !== undefined && given.has(option.long) && !types.includes(type))
      throw new CliError(`${option.long} does not apply to --type ${type}`);
  }
  const input = await inputFrom(type, (flag) => given.get(flag));
  if (OAUTH.includes(type)) {
    if (!given.has('--client-secret-stdin'))
      throw new CliError(`--type ${type} needs --client-secret-stdin (the client secret is read from stdin)`);
    input.clientSecret = await readSecretFromStdin(stdin, 'client secret');
  }
  if (given.has('--bind-dn') !== given.has('--bind-password-stdin'))
    throw new CliError('--bind-dn and --bind-password-stdin go together (omit both for an anonymous bind)');
  if (given.has('--bind-password-stdin'))
    input.bindPassword = await readSecretFromStdin(stdin, 'bind password');
  return { input, describe: { label: FIELD_OPTIONS, requiredContext: ` for --type ${type}` } };
}

/**
 * The change `idps update` describes, as a JSON merge patch of the provider's configuration: only
 * the options typed, checked to apply to the provider's `type`; secrets read from stdin, never
 * from argv. Errors name the option.
 * @throws CliError for an option of another type, nothing to change, or options that do not go together.
 */
export async function providerPatchFromCommand(
  command: Command,
  stdin: NodeJS.ReadableStream,
  type: ProviderType,
): Promise<ProviderInput> {
  const given = typed(command);
  given.delete('--json');
  given.delete('--if-match');
  if (given.size === 0) throw new CliError('idps update needs at least one option to change');
  for (const { option, types } of [...OPTIONS, ...UPDATE_ONLY]) {
    if (types !== undefined && option.long !== undefined && given.has(option.long) && !types.includes(type))
      throw new CliError(`${option.long} does not apply to a provider of type ${type}`);
  }
  const patch = await inputFrom(type, (flag) => given.get(flag));
  for (const flag of (given.get('--unset') as string[] | undefined) ?? []) unset(patch, flag, type, given);
  // Commander keeps one value for --teams and --no-teams, under `teams`: true or false.
  for (const [field, flag] of [
    ['linkByVerifiedEmail', '--link-by-verified-email'],
    ['useUserinfo', '--use-userinfo'],
    ['trustEmailVerified', '--trust-email-verified'],
    ['startTls', '--start-tls'],
    ['loadTeams', '--teams'],
  ] as const) {
    const value = given.get(flag) ?? given.get(`--no-${flag.slice(2)}`);
    if (typeof value === 'boolean') patch[field] = value;
  }
  for (const nested of ['claims', 'userSearch'] as const) {
    const value = patch[nested];
    if (typeof value === 'object' && value !== null && Object.keys(value).length === 0) delete patch[nested];
  }
  if (given.has('--client-secret-stdin'))
    patch.clientSecret = await readSecretFromStdin(stdin, 'client secret');
  if (given.has('--bind-password-stdin'))
    patch.bindPassword = await readSecretFromStdin(stdin, 'bind password');
  return { input: patch, describe: { label: FIELD_OPTIONS } };
}

/** The configuration field each option sets, for `--unset` (the reverse of FIELD_OPTIONS). */
const OPTION_FIELDS = new Map<string, string>(
  Object.entries(FIELD_OPTION_NAMES).flatMap(([field, flag]) =>
    // `--user-base-dn` names both `userSearch` (for errors) and `userSearch.baseDn`: it unsets the latter.
    field === 'userSearch' ? [] : [[flag, field] as const],
  ),
);

/**
 * Adds `null` for `flag`'s field to a merge patch: the use case drops it and checks what remains,
 * so unsetting a required field is refused there, named by its option. Secrets are unset with the
 * option that reads them (`--unset client-secret-stdin`).
 * @throws CliError for an option that sets no field, one of another provider type, or one both set and unset.
 */
function unset(
  patch: Record<string, unknown>,
  name: string,
  type: ProviderType,
  given: Map<string, unknown>,
) {
  const flag = name.startsWith('--') ? name : `--${name}`;
  const field = OPTION_FIELDS.get(flag);
  if (field === undefined || ADD_ONLY.has(flag))
    throw new CliError(
      `--unset ${name}: not an option that sets a value (${[...OPTION_FIELDS.keys()]
        .filter((option) => !ADD_ONLY.has(option))
        .map((option) => option.slice(2))
        .join(', ')})`,
    );
  const entry = OPTIONS.find(({ option }) => option.long === flag);
  if (entry?.types !== undefined && !entry.types.includes(type))
    throw new CliError(`--unset ${name}: ${flag} does not apply to a provider of type ${type}`);
  if (given.has(flag)) throw new CliError(`${flag} cannot be both given and unset`);
  const [outer, inner] = field.split('.') as [string, string | undefined];
  if (inner === undefined) {
    patch[outer] = null;
    return;
  }
  const nested = patch[outer];
  patch[outer] = { ...(typeof nested === 'object' && nested !== null ? nested : {}), [inner]: null };
}

/** The configuration input the options describe (secrets are added by the caller). */
async function inputFrom(
  type: ProviderType,
  get: (flag: string) => unknown,
): Promise<Record<string, unknown>> {
  const input: Record<string, unknown> = {};
  const set = (field: string, flag: string, object = input) => {
    const value = get(flag);
    if (value !== undefined) object[field] = value;
  };
  set('name', '--name');
  set('type', '--type');
  set('displayName', '--display-name');
  set('mapping', '--mapping');
  if (get('--link-by-verified-email') === true) input.linkByVerifiedEmail = true;
  set('tokenClientId', '--token-client');
  set('groupsPrefix', '--groups-prefix');
  if (type === 'ldap') {
    set('url', '--url');
    if (get('--start-tls') === true) input.startTls = true;
    const caFile = get('--ca-file');
    if (typeof caFile === 'string') input.caCertificate = await readCaFile(caFile);
    set('bindDn', '--bind-dn');
    const timeout = get('--timeout-ms');
    if (typeof timeout === 'string') {
      if (!/^\d+$/.test(timeout))
        throw new CliError(`--timeout-ms ${JSON.stringify(timeout)}: must be a whole number of milliseconds`);
      input.timeoutMs = Number(timeout);
    }
    const userSearch: Record<string, unknown> = {};
    set('baseDn', '--user-base-dn', userSearch);
    set('filter', '--user-filter', userSearch);
    set('usernameAttribute', '--username-attribute', userSearch);
    set('emailAttribute', '--email-attribute', userSearch);
    set('nameAttribute', '--name-attribute', userSearch);
    set('idAttribute', '--id-attribute', userSearch);
    input.userSearch = userSearch;
    const groupSearch: Record<string, unknown> = {};
    set('baseDn', '--group-base-dn', groupSearch);
    set('filter', '--group-filter', groupSearch);
    set('nameAttribute', '--group-name-attribute', groupSearch);
    if (Object.keys(groupSearch).length > 0) input.groupSearch = groupSearch;
    return input;
  }
  set('clientId', '--client-id');
  set('baseUrl', '--base-url');
  if (get('--trust-email-verified') === true) input.trustEmailVerified = true;
  if (type === 'oidc') {
    set('issuer', '--issuer');
    set('scopes', '--scope');
    const claims: Record<string, unknown> = {};
    set('username', '--username-claim', claims);
    set('email', '--email-claim', claims);
    set('groups', '--groups-claim', claims);
    set('name', '--name-claim', claims);
    input.claims = claims;
    if (get('--use-userinfo') === true) input.useUserinfo = true;
    set('trustUpstreamMfa', '--trust-upstream-mfa');
  }
  if (type === 'github') {
    set('apiUrl', '--api-url');
    set('allowedOrganizations', '--allowed-org');
    if (get('--no-teams') === false) input.loadTeams = false;
  }
  if (type === 'gitlab') set('allowedGroups', '--allowed-group');
  return input;
}

async function readProviderFile(file: string): Promise<unknown> {
  const extension = extname(file).toLowerCase();
  if (!['.json', '.yaml', '.yml'].includes(extension))
    throw new CliError(`--from-file ${file}: must be a .json, .yaml or .yml file`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(
      `--from-file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    return extension === '.json' ? JSON.parse(text) : (await import('yaml')).parse(text);
  } catch {
    // The parser's message may quote the file, secrets included: say only where.
    throw new CliError(`--from-file ${file}: is not valid ${extension === '.json' ? 'JSON' : 'YAML'}`);
  }
}

async function readCaFile(file: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(
      `--ca-file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new CliError(`--ca-file ${file}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return pem;
}
