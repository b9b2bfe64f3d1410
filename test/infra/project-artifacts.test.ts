// Where a project's own Maven or Gradle build installs its artifacts in Maven's local repository.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { projectArtifacts } from '../../src/infra/project-artifacts.js';

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-artifacts-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const ROOT_POM = `<?xml version="1.0"?>
<project>
  <!-- <groupId>commented.out</groupId> -->
  <parent>
    <groupId>org.springframework.boot</groupId>
    <artifactId>spring-boot-starter-parent</artifactId>
  </parent>
  <groupId>com.acme</groupId>
  <artifactId>app-parent</artifactId>
  <modules>
    <module>core</module>
    <module>../outside</module>
  </modules>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId></dependency>
  </dependencies>
  <profiles>
    <profile><modules><module>extra</module></modules></profile>
  </profiles>
</project>
`;

it('reads a Maven reactor: the root, its modules and theirs, each module’s group from its parent when it has none', async () => {
  const dir = await tree({
    'repo/pom.xml': ROOT_POM,
    'repo/core/pom.xml': `<project><parent><groupId>com.acme</groupId><artifactId>app-parent</artifactId></parent>
<artifactId>core</artifactId><modules><module>core-api/pom.xml</module></modules>
<build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId></plugin></plugins></build></project>`,
    'repo/core/core-api/pom.xml':
      '<project><groupId>com.acme.api</groupId><artifactId>api</artifactId></project>',
    'repo/extra/pom.xml':
      '<project><groupId>${revision.group}</groupId><artifactId>extra</artifactId></project>',
    // Not the project's: a folder beside it.
    'outside/pom.xml': '<project><groupId>x</groupId><artifactId>y</artifactId></project>',
  });
  expect(await projectArtifacts(join(dir, 'repo'))).toEqual([
    'com/acme/api/api',
    'com/acme/app-parent',
    'com/acme/core',
  ]);
});

it('reads a Gradle build: the root build’s group with the root project and each one the settings include', async () => {
  const kotlin = await tree({
    'build.gradle.kts': 'plugins { `java-library` }\ngroup = "com.acme"\nversion = "1.0"\n',
    'settings.gradle.kts': 'rootProject.name = "app"\ninclude(":core", ":libs:util")\n',
  });
  expect(await projectArtifacts(kotlin)).toEqual(['com/acme/app', 'com/acme/core', 'com/acme/util']);
  const groovy = await tree({
    'build.gradle': "allprojects {\n  group = 'org.example'\n}\n",
    'settings.gradle': "rootProject.name = 'tool'\ninclude 'cli'\n",
  });
  expect(await projectArtifacts(groovy)).toEqual(['org/example/cli', 'org/example/tool']);
});

it('finds none in a tree without a build, or one whose group it cannot read', async () => {
  expect(await projectArtifacts(await tree({ 'package.json': '{}' }))).toEqual([]);
  expect(
    await projectArtifacts(await tree({ 'build.gradle': 'group = project.findProperty("g")\n' })),
  ).toEqual([]);
});
