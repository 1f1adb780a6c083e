#!/usr/bin/env node
// The `colloquy` command.
import { runCli } from './cli/run-cli.js';

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
