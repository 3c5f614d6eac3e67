#!/usr/bin/env node
// Runs on the project's Node 24 (node_modules/.bin comes first on PATH under npx and npm scripts),
// which loads the TypeScript sources directly. Node's compile cache (in the system's temporary
// directory) keeps their compiled code between commands: a third of each command's start-up.
import module from 'node:module';

module.enableCompileCache?.();
await import('../src/cli/main.ts');
