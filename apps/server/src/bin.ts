#!/usr/bin/env node
import { runCli } from './cli/program.js';

// The exit code is set, not forced: `serve` keeps running on its open server, and the other
// commands end once they have closed the database.
process.exitCode = await runCli(process.argv.slice(2));
