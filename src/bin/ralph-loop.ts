// The `ralph-loop` executable's program. `ralph-loop status <epic>` with plain arguments does not come
// here: bin/run-built.js runs it through dist/bundle/status-fast.cjs first (it is polled while loops
// run), and only a status that path cannot finish runs in full (see program.ts for how it loads).
const { loadProgram } = await import('../cli/program.js');
const { runRalphLoop } = await loadProgram();
await runRalphLoop(process.argv);
