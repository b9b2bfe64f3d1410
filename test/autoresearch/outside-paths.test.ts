// Paths in code the metric loads that lead to files no commit holds (src/autoresearch/outside-paths.ts),
// and the ordinary paths that do not.
import { describe, expect, it } from 'vitest';
import { outsidePaths } from '../../src/autoresearch/outside-paths.js';
import { loadedCodeReaches } from '../../src/autoresearch/loaded-reaches.js';

const found = (code: string, path = 'src/lib.mjs') => Object.fromEntries(outsidePaths(code, path));

describe('outsidePaths', () => {
  it("names git's, Forge's and br's folders in the repository", () => {
    expect(found("readFileSync('.git/probe-cache', 'utf8')")).toEqual({ '.git': 1 });
    expect(found("join(root, '.forge', 'cache')\nreadFileSync(`${root}/.beads/x`)")).toEqual({
      '.forge': 1,
      '.beads': 1,
    });
    expect(found("open('./.git/x')", 'src/lib.py')).toEqual({ '.git': 1 });
  });

  it('leaves names that only start like them', () => {
    expect(found("const files = ['.github/workflows', '.gitignore', '.forgerc', 'a.git.bak']")).toEqual({});
  });

  it('a climb above the repository, from the repository root (where the metric runs)', () => {
    expect(found("readFileSync('../probe-cache')")).toEqual({ "'../probe-cache' above the repository": 1 });
    expect(found("readFileSync(process.cwd() + '/../probe')")).toEqual({
      "'/../probe' above the repository": 1,
    });
    expect(found("open(os.path.join('..', 'cache'))", 'src/lib.py')).toEqual({
      "'..' above the repository": 1,
    });
  });

  it("a climb from the file's own folder counts when it leaves the repository", () => {
    const url = "readFileSync(new URL('../../probe-cache', import.meta.url))";
    expect(found(url)).toEqual({ "'../../probe-cache' above the repository": 1 });
    expect(found(url, 'packages/a/src/lib.mjs')).toEqual({});
    const py = "open(os.path.join(os.path.dirname(__file__), '..', '..', 'cache'))";
    expect(found(py, 'src/lib.py')).toEqual({ "'..' above the repository": 1 });
    expect(found(py, 'src/pkg/lib.py')).toEqual({});
  });

  it("leaves modules' names and reads within the repository", () => {
    expect(found("import { a } from '../../shared/a.js';\nexport * from '../b.js';")).toEqual({});
    expect(found("const m = await import('../x.js');\nconst r = require('../../y');")).toEqual({});
    expect(found("readFileSync(new URL('../data/table.json', import.meta.url))")).toEqual({});
    expect(found("readFileSync(join(__dirname, '..', 'data.json'))")).toEqual({});
    expect(found("readFileSync('data/table.json')\nconst dots = '...'")).toEqual({});
  });
});

describe('in the reading of code the metric loads', () => {
  it('counts with the rest, comments apart', () => {
    const code = "// cache in .git/x\nexport const v = () => readFileSync('.git/x');\n";
    expect(loadedCodeReaches(code, 'src/lib.mjs').get('.git')).toBe(1);
    expect(loadedCodeReaches("# '.git/x'\nv = 1\n", 'src/lib.py').get('.git')).toBeUndefined();
  });
});
