#!/usr/bin/env node
// See bin/ralph-loop.js: the bundle scripts/build.mjs makes.
require('./run-built.js').runBuilt('forge-pack');
