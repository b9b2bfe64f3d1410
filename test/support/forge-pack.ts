// A cheat for tests: a pack holding one object, whose index (v2) names it as another, written into the
// repository's own packs as an agent with a shell could. Git looks an object up in the packs before the
// loose objects and reads a blob without hashing it, so `git show` then prints the held object's bytes
// for the claimed name.
import { execFileSync } from 'node:child_process';

/**
 * argv: the object to claim and the one to hold instead. A pack of the second, and an index (v2) naming
 * its one entry as the first, written into the repository's own packs.
 */
export const FORGE_PACK = `const { execFileSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const { crc32 } = require("node:zlib");
const [claim, real] = process.argv.slice(1);
const pack = execFileSync("git", ["pack-objects", "--stdout"], { input: real + "\\n" });
const entry = pack.subarray(12, pack.length - 20);
const name = Buffer.from(claim, "hex");
const fanout = Buffer.alloc(1024);
for (let i = name[0]; i < 256; i += 1) fanout.writeUInt32BE(1, i * 4);
const crc = Buffer.alloc(4);
crc.writeUInt32BE(crc32(entry) >>> 0);
const offset = Buffer.alloc(4);
offset.writeUInt32BE(12);
const sum = pack.subarray(pack.length - 20);
const idx = Buffer.concat([Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]), fanout, name, crc, offset, sum]);
const base = ".git/objects/pack/pack-" + sum.toString("hex");
fs.mkdirSync(".git/objects/pack", { recursive: true });
fs.writeFileSync(base + ".pack", pack);
fs.writeFileSync(base + ".idx", Buffer.concat([idx, createHash("sha1").update(idx).digest()]));
`;

/** Runs FORGE_PACK in the repository at `dir`: `claim` read as `real`; returns the index written. */
export function forgePack(dir: string, claim: string, real: string): string {
  return execFileSync(
    process.execPath,
    ['-e', `${FORGE_PACK}\nprocess.stdout.write(base + ".idx");`, claim, real],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
}
