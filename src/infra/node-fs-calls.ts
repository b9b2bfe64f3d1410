// The `fs` calls the Node read watch (node-read-watch.ts) wraps, by what each does with its path.

/** `fs` functions whose first argument is a path they read, list or test. */
export const READS = [
  'readFileSync',
  'readFile',
  'openSync',
  'open',
  'createReadStream',
  'readdirSync',
  'readdir',
  'opendirSync',
  'opendir',
  'existsSync',
  'exists',
  'statSync',
  'stat',
  'lstatSync',
  'lstat',
  'accessSync',
  'access',
  'readlinkSync',
  'readlink',
  // What a path resolves to, or the file system it is on, says whether it is there (red team: a
  // doer-left ../flag tested with realpathSync passed unseen).
  'realpathSync',
  'realpath',
  'statfsSync',
  'statfs',
  'watch',
  'watchFile',
  'openAsBlob',
  'copyFileSync',
  'copyFile',
  'cpSync',
  'cp',
];
/** `fs.promises` functions of the same kind. */
export const PROMISE_READS = [
  'readFile',
  'open',
  'readdir',
  'opendir',
  'stat',
  'lstat',
  'access',
  'readlink',
  'realpath',
  'statfs',
  'watch',
  'copyFile',
  'cp',
];
/** The realpath functions' `native` forms, by the name they are logged under. */
export const NATIVE_FORMS = ['realpathSync', 'realpath'];
/** Functions that write a path: refused on the watch's own folder. */
export const WRITES = [
  'writeFileSync',
  'writeFile',
  'appendFileSync',
  'appendFile',
  'truncateSync',
  'truncate',
  'createWriteStream',
  'rmSync',
  'rm',
  'unlinkSync',
  'unlink',
  'renameSync',
  'rename',
  'rmdirSync',
  'rmdir',
  'chmodSync',
  'chmod',
  // A hard link to the log, made elsewhere, is the log by another name (then truncated there).
  'linkSync',
  'link',
  'symlinkSync',
  'symlink',
];
export const PROMISE_WRITES = [
  'writeFile',
  'appendFile',
  'truncate',
  'rm',
  'unlink',
  'rename',
  'rmdir',
  'chmod',
  'link',
  'symlink',
];
/** Calls whose second argument is a path too: where a copy, a move or a link goes. */
export const TWO_PATHS = [
  'cpSync',
  'cp',
  'copyFileSync',
  'copyFile',
  'renameSync',
  'rename',
  'linkSync',
  'link',
  'symlinkSync',
  'symlink',
];
/**
 * The `fs` binding's own functions (`process.binding('fs')`, which the public ones call): code that calls
 * them reads past every wrapper above (red team: `process.binding('fs').readFileUtf8(p, 0)` read the
 * metric's cases unseen). Each by the public call it is logged as; null: a write, refused on the
 * watch's own folder. Names differ between Node versions: those a version lacks are passed over.
 */
export const BINDING_CALLS: Record<string, string | null> = {
  open: 'open',
  openFileHandle: 'open',
  readFileUtf8: 'readFile',
  internalModuleReadJSON: 'readFile',
  readdir: 'readdir',
  copyFile: 'copyFile',
  cpSyncCopyDir: 'cp',
  cpSyncOverrideFile: 'cp',
  writeFileUtf8: null,
  rename: null,
  unlink: null,
  rmdir: null,
  rmSync: null,
  mkdir: null,
  link: null,
  symlink: null,
  chmod: null,
  utimes: null,
  lutimes: null,
};
