#!/usr/bin/env node
// The `colloquy` command. It lives outside dist/ so that package managers can link it before the
// first build (a workspace install links bins of packages that are not built yet).
import '../dist/cli.js';
