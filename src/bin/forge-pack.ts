// The `forge-pack` executable.
import { runForgePack } from '../cli/main.js';

await runForgePack(process.argv);
