/**
 * `@idgate/kubectl`: the `kubectl-idgate` credential plugin, also usable as a library.
 * @example
 * import { main } from '@idgate/kubectl';
 *
 * process.exitCode = await main(['get-token', '--issuer', 'https://id.example.com/oauth', '--client-id', 'kubectl', '--cluster', 'prod'], {
 *   env: process.env,
 *   stdout: (text) => process.stdout.write(text),
 *   stderr: (text) => process.stderr.write(text),
 * });
 * @packageDocumentation
 */
export type { ExchangeArgs, GetTokenArgs, LogoutArgs, PluginArgs, SetupArgs } from './args.js';
export { clusterAudience, EXCHANGE_AUDIENCE_DEFAULT, parsePluginArgs } from './args.js';
export type { AccessEntry, GrantEntry } from './cache.js';
export { defaultCacheDir, TokenCache } from './cache.js';
export { main, pluginClock, TEST_CLOCK_VARIABLE } from './cli.js';
export { PluginError } from './errors.js';
export type { SubjectSource } from './exchange.js';
export { exchangeToken, readSubjectToken, subjectSource } from './exchange.js';
export type { ExecInfo } from './exec-credential.js';
export { execCredential, readExecInfo } from './exec-credential.js';
export type { PluginContext } from './get-token.js';
export { getToken, MIN_REMAINING_MS } from './get-token.js';
export { logout } from './logout.js';
export { KUBECONFIG_EXEC_API_VERSION, kubeconfigPath, setup } from './setup.js';
