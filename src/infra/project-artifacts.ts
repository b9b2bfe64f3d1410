// The project's own artifacts as Maven's local repository files them: `mvn install` and Gradle's
// `publishToMavenLocal` write the project's jars there on every build, so those folders change by
// design and are not a download's (package-stores.ts leaves them out). Read from the build files of
// the tree as they are at each look: a doer that renamed its artifact to a dependency's would have
// that dependency's files vanish from the watch, which reads as a change.
import { join } from 'node:path';
import { readFileIfExists } from './atomic-file.js';

/** How deep Maven modules are followed: a reactor nests a few levels, a cycle not at all. */
const MAX_MODULE_DEPTH = 6;

/** The text of `<name>` directly in `xml`, once comments and the sections that name others' are gone. */
function tag(xml: string, name: string): string | undefined {
  const found = new RegExp(`<${name}>\\s*([^<\\s]+)\\s*</${name}>`).exec(xml)?.[1];
  return found === undefined || found.includes('${') ? undefined : found;
}

/** The sections of a pom that name other projects' coordinates (dependencies, plugins, the parent). */
const OTHERS =
  /<(parent|dependencies|dependencyManagement|build|profiles|reporting|repositories|pluginRepositories|distributionManagement|extensions)>[\s\S]*?<\/\1>/g;

interface Pom {
  groupId: string | undefined;
  artifactId: string | undefined;
  modules: string[];
}

function readPom(text: string): Pom {
  const xml = text.replace(/<!--[\s\S]*?-->/g, '');
  const parent = /<parent>([\s\S]*?)<\/parent>/.exec(xml)?.[1] ?? '';
  const own = xml.replace(OTHERS, '');
  return {
    groupId: tag(own, 'groupId') ?? tag(parent, 'groupId'),
    artifactId: tag(own, 'artifactId'),
    modules: [...xml.matchAll(/<module>\s*([^<]+?)\s*<\/module>/g)].map((found) => found[1]!),
  };
}

/** `group/id/artifact` for a Maven coordinate: its folder in the local repository. */
const folderOf = (groupId: string, artifactId: string) => [...groupId.split('.'), artifactId].join('/');

async function mavenArtifacts(dir: string, depth: number, into: Set<string>): Promise<void> {
  const text = await readFileIfExists(join(dir, 'pom.xml')).catch(() => undefined);
  if (text === undefined) return;
  const pom = readPom(text);
  if (pom.groupId !== undefined && pom.artifactId !== undefined)
    into.add(folderOf(pom.groupId, pom.artifactId));
  if (depth >= MAX_MODULE_DEPTH) return;
  for (const module of pom.modules) {
    if (module.split(/[\\/]/).includes('..')) continue;
    await mavenArtifacts(join(dir, module.replace(/\/?pom\.xml$/, '')), depth + 1, into);
  }
}

async function readFirst(dir: string, names: readonly string[]): Promise<string> {
  for (const name of names) {
    const text = await readFileIfExists(join(dir, name)).catch(() => undefined);
    if (text !== undefined) return text;
  }
  return '';
}

/** The root build's `group` and the projects the settings name (`rootProject.name`, `include`). */
async function gradleArtifacts(dir: string, into: Set<string>): Promise<void> {
  const build = await readFirst(dir, ['build.gradle.kts', 'build.gradle']);
  const group = /^\s*(?:allprojects\s*\{\s*)?group\s*=?\s*["']([^"'$]+)["']/m.exec(build)?.[1];
  if (group === undefined) return;
  const settings = await readFirst(dir, ['settings.gradle.kts', 'settings.gradle']);
  const names = new Set<string>();
  const root = /rootProject\.name\s*=\s*["']([^"'$]+)["']/.exec(settings)?.[1];
  if (root !== undefined) names.add(root);
  for (const line of settings.matchAll(/^\s*include\b(.*)$/gm))
    for (const path of line[1]!.matchAll(/["']([^"'$]+)["']/g)) names.add(path[1]!.split(':').at(-1)!);
  for (const name of names) if (name !== '') into.add(folderOf(group, name));
}

/**
 * The folders (relative to the local repository, `/`-separated) where the Maven or Gradle build in
 * `dir` installs its own artifacts: from the root `pom.xml` and the modules it names, and from the
 * root Gradle build's group with the projects its settings name.
 */
export async function projectArtifacts(dir: string): Promise<string[]> {
  const found = new Set<string>();
  await mavenArtifacts(dir, 0, found);
  await gradleArtifacts(dir, found);
  return [...found].sort();
}
