#!/usr/bin/env node
// Runs on the project's Node 24 (node_modules/.bin comes first on PATH under npx and npm scripts),
// which loads the TypeScript sources directly.
import '../src/cli/main.ts';
