#!/usr/bin/env node
// The built program is one bundle per executable (scripts/build.mjs): Node loads a few files instead
// of a few hundred, which is most of a short command's time.
import { runBuilt } from './run-built.js';

await runBuilt('ralph-loop');
