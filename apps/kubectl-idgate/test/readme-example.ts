import { main } from '../src/index.js';

// The plugin as a library: the same commands as the `kubectl-idgate` binary, with the caller's streams.
process.exitCode = await main(
  ['get-token', '--issuer', 'https://id.example.com/oauth', '--client-id', 'cl_…', '--cluster', 'prod'],
  {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  },
);
