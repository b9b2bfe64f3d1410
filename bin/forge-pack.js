#!/usr/bin/env node
import { runForgePack } from '../dist/cli/main.js';
await runForgePack(process.argv);
