#!/usr/bin/env node
// See bin/ralph-loop.js: the bundle scripts/build.mjs makes.
import { runBuilt } from './run-built.js';

await runBuilt('forge-pack');
