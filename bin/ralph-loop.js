#!/usr/bin/env node
// The built program is one bundle per executable (scripts/build.mjs): Node loads a few files instead
// of a few hundred, which is most of a short command's time. See run-built.js.
require('./run-built.js').runBuilt('ralph-loop');
