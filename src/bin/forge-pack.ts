// The `forge-pack` executable (see program.ts for how the program loads).
import { loadProgram } from '../cli/program.js';

const { runForgePack } = await loadProgram();
await runForgePack(process.argv);
