#!/usr/bin/env node
// `npm run typecheck` and `npm run lint` in one process, over one TypeScript program.
//
// Each builds the same program on its own: tsc to check it, typescript-eslint's project service for the
// type-aware rules. Here the program tsc would check is built once, its diagnostics printed as
// `tsc --noEmit --pretty false` prints them, and handed to ESLint for every .ts file (plain JavaScript
// is linted without types, as eslint.config.js says). `npm run check` runs this; the two scripts stay
// for running one alone. Exit 1 when either finds a problem, 2 when it could not run.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function typeCheck() {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), { noEmit: true }, host);
  if (parsed === undefined) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
    configFileParsingDiagnostics: parsed.errors,
  });
  // The config's own errors are among these (configFileParsingDiagnostics), once.
  return { program, diagnostics: ts.getPreEmitDiagnostics(program) };
}

let failed = false;
try {
  const { program, diagnostics } = typeCheck();
  if (diagnostics.length > 0) {
    failed = true;
    process.stdout.write(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (name) => name,
        getCurrentDirectory: () => root,
        getNewLine: () => '\n',
      }),
    );
    const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length;
    process.stdout.write(`\ntypecheck: ${errors} error(s)\n`);
  }

  const eslint = new ESLint({
    cwd: root,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parserOptions: { programs: [program], projectService: false } },
      },
    ],
  });
  const results = await eslint.lintFiles(['.']);
  const problems = results.reduce((sum, r) => sum + r.errorCount + r.warningCount, 0);
  if (problems > 0) {
    failed = true;
    const formatter = await eslint.loadFormatter('stylish');
    process.stdout.write(await formatter.format(results));
  }
  if (!failed) {
    process.stdout.write(
      `typecheck: ${program.getRootFileNames().length} files, no errors; lint: ${results.length} files, no problems\n`,
    );
  }
} catch (error) {
  process.stderr.write(
    `typecheck-and-lint: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(2);
}
process.exit(failed ? 1 : 0);
