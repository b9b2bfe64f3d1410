#!/usr/bin/env node
import { runRalphLoop } from '../dist/cli/main.js';
await runRalphLoop(process.argv);
