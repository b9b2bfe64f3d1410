// A test switched off or narrowed: `it.skip`, `.only`, `xit`, `@pytest.mark.xfail`, `t.Skip()`,
// `#[ignore]`, `@Disabled`. In a loop whose doer may write tests, a test it skips counts neither as
// passed nor failed, and `.only` leaves out every test beside it: a pass rate rises with no code
// better. Pure: the caller counts them as it does suppressions, so only the ones the doer added count.
import { countMatches } from './match-counts.js';

const SKIPS: readonly RegExp[] = [
  // JavaScript and TypeScript: vitest, jest, mocha, node:test, ava, jasmine.
  /\b(?:it|test|describe|suite|context|specify|bench)\s*\.\s*(?:skip|only|todo|fails|skipIf|runIf|failing)\b/gm,
  /(?<![\w$.])(?:xit|xtest|xdescribe|xcontext|xspecify|fit|ftest|fdescribe)\s*\(/gm,
  /\b(?:this|t|ctx|context)\s*\.\s*(?:skip|todo)\s*\(/gm,
  /\{\s*(?:skip|only|todo)\s*:\s*(?:true|['"`])/gm,
  // Python: pytest, unittest.
  /@pytest\s*\.\s*mark\s*\.\s*(?:skip|skipif|xfail)\b|\bpytest\s*\.\s*(?:skip|xfail|importorskip)\s*\(/gm,
  /@unittest\s*\.\s*(?:skip|skipIf|skipUnless|expectedFailure)\b|\bself\s*\.\s*skipTest\s*\(|\braise\s+(?:unittest\s*\.\s*)?SkipTest\b/gm,
  // Go, Rust, Java and Kotlin, C#, Ruby (RSpec), PHPUnit.
  /\bt\s*\.\s*Skip(?:Now|f)?\s*\(/gm,
  /#\[\s*ignore\b[^\]]*\]/gm,
  /@(?:Disabled|Ignore|DisabledIf\w*|EnabledIf\w*)\b/gm,
  /\[\s*(?:Ignore|Fact\s*\(\s*Skip\s*=)/gm,
  /^\s*(?:xit|xdescribe|xcontext|pending|skip)(?=[ \t]+['"])/gm,
  /\$this\s*->\s*markTest(?:Skipped|Incomplete)\s*\(/gm,
];

/** Each test switch-off `text` holds, by what it says, with how often. */
export function testSkips(text: string): Map<string, number> {
  return countMatches(text, SKIPS);
}
