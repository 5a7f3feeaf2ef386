import { describe, expect, it } from 'vitest';
import { parsePluginArgs } from '../src/args.js';
import { PluginError } from '../src/errors.js';

const base = ['--issuer', 'https://id.example.com/oauth', '--client-id', 'kubectl'];
const usage = (argv: string[]) => {
  try {
    parsePluginArgs(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(PluginError);
    expect((error as PluginError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
};

describe('kubectl-idgate get-token arguments', () => {
  it('--cluster NAME means the audience kubernetes:NAME; defaults: browser flow on a random loopback port', () => {
    expect(parsePluginArgs(['get-token', ...base, '--cluster', 'prod'])).toEqual({
      command: 'get-token',
      issuer: 'https://id.example.com/oauth',
      clientId: 'kubectl',
      audience: 'kubernetes:prod',
      device: false,
      noBrowser: false,
      listen: { host: '127.0.0.1', port: 0 },
      cacheDir: undefined,
      timeoutSeconds: 300,
    });
  });

  it('takes --audience, --device, --no-browser, --listen-address, --cache-dir and --timeout', () => {
    const args = parsePluginArgs([
      'get-token',
      ...base,
      '--audience',
      'https://k8s.example',
      '--device',
      '--no-browser',
      '--listen-address',
      '127.0.0.1:8000',
      '--cache-dir',
      '/tmp/c',
      '--timeout',
      '60',
    ]);
    expect(args).toMatchObject({
      audience: 'https://k8s.example',
      device: true,
      noBrowser: true,
      listen: { host: '127.0.0.1', port: 8000 },
      cacheDir: '/tmp/c',
      timeoutSeconds: 60,
    });
  });

  it('accepts [::1]:PORT and drops a trailing slash of the issuer', () => {
    const args = parsePluginArgs([
      'get-token',
      '--issuer',
      'https://id.example.com/oauth/',
      '--client-id',
      'k',
      '--cluster',
      'a',
      '--listen-address',
      '[::1]:9000',
    ]);
    expect(args).toMatchObject({
      issuer: 'https://id.example.com/oauth',
      listen: { host: '[::1]', port: 9000 },
    });
  });

  it('refuses what it cannot use, naming the option', () => {
    expect(usage(['get-token', ...base])).toMatch(/^--cluster NAME or --audience A is required/);
    expect(usage(['get-token', ...base, '--cluster', 'a', '--audience', 'b'])).toMatch(
      /^pass --cluster or --audience, not both/,
    );
    expect(usage(['get-token', '--client-id', 'k', '--cluster', 'a'])).toMatch(/^--issuer is required/);
    expect(usage(['get-token', '--issuer', 'ftp://x', '--client-id', 'k', '--cluster', 'a'])).toMatch(
      /^--issuer must be an absolute http\(s\) URL/,
    );
    expect(usage(['get-token', ...base, '--cluster', 'a', '--listen-address', '0.0.0.0:80'])).toMatch(
      /^--listen-address must be 127\.0\.0\.1:PORT/,
    );
    expect(usage(['get-token', ...base, '--cluster', 'a', '--listen-address', '127.0.0.1:70000'])).toMatch(
      /^--listen-address/,
    );
    expect(usage(['get-token', ...base, '--cluster', 'a', '--timeout', '0'])).toMatch(
      /^--timeout must be a positive/,
    );
    expect(usage(['get-token', ...base, '--cluster', 'a', '--bogus'])).toMatch(/Unknown option '--bogus'/);
    expect(usage(['get-token', ...base, '--cluster', ''])).toMatch(/^--cluster must not be empty/);
    expect(usage(['frobnicate'])).toMatch(/^unknown command "frobnicate"/);
  });
});

describe('kubectl-idgate setup and logout arguments', () => {
  it('setup needs the cluster and its server; --command defaults to kubectl-idgate on PATH', () => {
    expect(
      parsePluginArgs(['setup', ...base, '--cluster', 'prod', '--server', 'https://10.0.0.1:6443']),
    ).toMatchObject({
      command: 'setup',
      cluster: 'prod',
      server: 'https://10.0.0.1:6443',
      execCommand: 'kubectl-idgate',
      context: undefined,
    });
    expect(usage(['setup', ...base, '--cluster', 'prod'])).toMatch(/^--server is required/);
    expect(usage(['setup', ...base, '--cluster', 'prod', '--server', '10.0.0.1'])).toMatch(
      /^--server must be/,
    );
  });

  it('logout takes an optional cluster', () => {
    expect(parsePluginArgs(['logout'])).toEqual({
      command: 'logout',
      audience: undefined,
      issuer: undefined,
      clientId: undefined,
      cacheDir: undefined,
    });
    expect(parsePluginArgs(['logout', '--cluster', 'prod'])).toMatchObject({ audience: 'kubernetes:prod' });
  });

  it('help', () => {
    expect(parsePluginArgs([])).toEqual({ command: 'help' });
    expect(parsePluginArgs(['--help'])).toEqual({ command: 'help' });
  });
});
