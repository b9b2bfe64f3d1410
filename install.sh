#!/usr/bin/env bash
# Installs Forge from this directory: checks Node, git and npm, builds when needed, links ralph-loop
# and forge-pack into a bin dir, copies the skills for Claude Code and Codex, and records every path
# it placed in a manifest, which uninstall.sh reads to remove exactly those.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: ./install.sh

Installs Forge from this checkout (or unpacked package) for the current user.

  FORGE_BIN_DIR     where ralph-loop and forge-pack are linked (default: ~/.local/bin)
  FORGE_SKILLS_DIR  where the skills are copied (default: ~/.claude/skills when ~/.claude exists,
                    and ~/.codex/skills when ~/.codex exists)
  FORGE_STATE_DIR   where the install manifest is kept
                    (default: ${XDG_DATA_HOME:-~/.local/share}/forge)

Running it again updates the install and changes nothing else. A file at a target path that this
installer did not put there is never overwritten: the install stops before changing anything and
names it. Remove everything it placed with ./uninstall.sh.

Alternatives: `npm ci && npm install -g .` in this directory (undo: npm uninstall -g forge-loop), or
without installing: npx --package <this directory> forge-pack init
EOF
}

case "${1:-}" in
  -h | --help)
    usage
    exit 0
    ;;
  '') ;;
  *)
    printf 'install.sh: unknown argument: %s\n' "$1" >&2
    usage >&2
    exit 2
    ;;
esac

die() {
  printf 'install.sh: %s\n' "$1" >&2
  if [ -n "${2:-}" ]; then printf 'hint: %s\n' "$2" >&2; fi
  exit "${3:-1}"
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
: "${HOME:?HOME is not set}"
BIN_DIR=${FORGE_BIN_DIR:-$HOME/.local/bin}
STATE_DIR=${FORGE_STATE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/forge}
MANIFEST=$STATE_DIR/install-manifest.txt
SKILL_MARKER=.forge-skill

# A skill directory's files, one `sha256  path` line each, sorted, the marker apart: what the marker
# lists (forge-pack skills install writes the same), so that a copy changed since is left alone.
skill_listing() {
  (cd "$1" && find . ! -type d ! -path "./$SKILL_MARKER" -print0 | LC_ALL=C sort -z |
    xargs -0 -r sha256sum | sed 's|^\([0-9a-f]*\)  \./|\1  |')
}

# True when the skill at $1 is no longer what its marker lists (a marker that lists nothing: unchanged).
skill_changed() {
  local listed
  listed=$(grep -E '^[0-9a-f]{64}  ' "$1/$SKILL_MARKER" 2>/dev/null || true)
  [ -n "$listed" ] || return 1
  [ "$listed" != "$(skill_listing "$1" 2>/dev/null)" ]
}
COMMANDS=(ralph-loop forge-pack)

# ---- prerequisites (exit 3: something needed is missing, as Forge's own commands do) ----

command -v node >/dev/null 2>&1 ||
  die 'Node.js is not installed (Forge needs Node 20.11 or newer).' \
    'Install it from https://nodejs.org (or: nvm install 20), then run ./install.sh again.' 3
node_version=$(node -p 'process.versions.node' 2>/dev/null) ||
  die 'node is on PATH but does not run.' 'Check that "node --version" works in this shell.' 3
IFS=. read -r node_major node_minor _ <<<"$node_version"
if [ "${node_major:-0}" -lt 20 ] || { [ "$node_major" -eq 20 ] && [ "${node_minor:-0}" -lt 11 ]; }; then
  die "Node.js $node_version is too old: Forge needs 20.11 or newer." \
    'Install a newer Node (https://nodejs.org, or: nvm install 20), then run ./install.sh again.' 3
fi
command -v git >/dev/null 2>&1 ||
  die 'git is not installed.' 'Install git (https://git-scm.com/downloads), then run ./install.sh again.' 3
command -v npm >/dev/null 2>&1 ||
  die 'npm is not installed.' 'It comes with Node.js; reinstall Node from https://nodejs.org.' 3

# ---- build when dist/ is missing, older than the sources, or its code cache is another Node's ----

needs_build() {
  [ -f "$ROOT/dist/bundle/meta.json" ] || return 0
  # An unpacked npm package ships dist/ without src/: nothing to rebuild from.
  [ -d "$ROOT/src" ] || return 1
  # A code cache made by another Node is refused by this one (each command ~45 ms slower): build again.
  [ "$(node -e 'try { process.stdout.write(String(require(process.argv[1]).node)) } catch {}' \
    "$ROOT/dist/bundle/program.json" 2>/dev/null)" = "$(node --version)" ] || return 0
  [ -n "$(find "$ROOT/src" "$ROOT/package.json" "$ROOT/tsconfig.json" "$ROOT/tsconfig.build.json" \
    -newer "$ROOT/dist/bundle/meta.json" -print 2>/dev/null | head -n 1)" ]
}

if needs_build; then
  if [ ! -x "$ROOT/node_modules/.bin/tsc" ]; then
    echo "Installing dependencies (npm ci) in $ROOT"
    (cd "$ROOT" && npm ci --no-audit --no-fund)
  fi
  echo "Building Forge (npm run build)"
  (cd "$ROOT" && npm run build)
elif [ ! -d "$ROOT/node_modules" ]; then
  echo "Installing runtime dependencies (npm install --omit=dev) in $ROOT"
  # Built already, so no scripts: npm would run the package's own `prepare` (a build from scripts/,
  # which a package does not ship), and the runtime dependencies need none of theirs.
  (cd "$ROOT" && npm install --omit=dev --ignore-scripts --no-audit --no-fund)
fi

# ---- what goes where ----

skill_roots=()
if [ -n "${FORGE_SKILLS_DIR:-}" ]; then
  skill_roots+=("$FORGE_SKILLS_DIR")
else
  if [ -d "$HOME/.claude" ]; then skill_roots+=("$HOME/.claude/skills"); fi
  if [ -d "$HOME/.codex" ]; then skill_roots+=("$HOME/.codex/skills"); fi
fi
skills=()
for skill_file in "$ROOT"/skills/*/SKILL.md; do
  [ -f "$skill_file" ] || continue
  skills+=("$(basename "$(dirname "$skill_file")")")
done

# Is this path recorded in the manifest of an earlier install?
in_manifest() {
  [ -f "$MANIFEST" ] && awk -F '\t' -v p="$1" '$2 == p { found = 1 } END { exit !found }' "$MANIFEST"
}

# A target may be replaced only when it is missing or was placed by Forge.
conflicts=()
check_target() { # path, what-ours-looks-like: link:<target> | skill
  local path=$1 ours=$2
  if [ ! -e "$path" ] && [ ! -L "$path" ]; then return 0; fi
  if in_manifest "$path"; then return 0; fi
  case "$ours" in
    link:*) if [ -L "$path" ] && [ "$(readlink "$path")" = "${ours#link:}" ]; then return 0; fi ;;
    skill) if [ -d "$path" ] && [ -f "$path/$SKILL_MARKER" ]; then return 0; fi ;;
  esac
  conflicts+=("$path")
}

for name in "${COMMANDS[@]}"; do
  check_target "$BIN_DIR/$name" "link:$ROOT/bin/$name.js"
done
for root in ${skill_roots[@]+"${skill_roots[@]}"}; do
  for name in ${skills[@]+"${skills[@]}"}; do check_target "$root/$name" skill; done
done
if [ ${#conflicts[@]} -gt 0 ]; then
  printf 'install.sh: these paths exist and were not placed by Forge; nothing was changed:\n' >&2
  printf '  %s\n' "${conflicts[@]}" >&2
  die 'refusing to overwrite them.' \
    'Move them away, or choose other places with FORGE_BIN_DIR / FORGE_SKILLS_DIR, then run ./install.sh again.'
fi

# ---- place everything, recording each path ----

entries=()
# Creates a directory and records it and every parent it had to create.
make_dir() {
  local dir=$1 missing=()
  while [ ! -d "$dir" ]; do
    missing+=("$dir")
    dir=$(dirname "$dir")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  mkdir -p "$1"
  for dir in "${missing[@]}"; do entries+=("$(printf 'dir\t%s' "$dir")"); done
}

make_dir "$BIN_DIR"
for name in "${COMMANDS[@]}"; do
  target=$ROOT/bin/$name.js
  [ -x "$target" ] || chmod +x "$target"
  ln -sfn "$target" "$BIN_DIR/$name"
  entries+=("$(printf 'link\t%s\t%s' "$BIN_DIR/$name" "$target")")
  echo "Linked $BIN_DIR/$name -> $target"
done

for root in ${skill_roots[@]+"${skill_roots[@]}"}; do
  make_dir "$root"
  placed=0
  for name in ${skills[@]+"${skills[@]}"}; do
    dest=$root/$name
    staging=$root/.$name.forge-install.$$
    rm -rf "$staging"
    entries+=("$(printf 'skill\t%s' "$dest")")
    if [ -d "$dest" ] && skill_changed "$dest"; then
      echo "Left in place (changed since it was installed; move it away to install this version): $dest"
      continue
    fi
    cp -R "$ROOT/skills/$name" "$staging"
    listing=$(skill_listing "$staging")
    printf 'Installed by Forge install.sh from %s; uninstall.sh removes this directory while it holds these files as they were placed:\n%s\n' \
      "$ROOT" "$listing" >"$staging/$SKILL_MARKER"
    rm -rf "$dest"
    mv "$staging" "$dest"
    placed=$((placed + 1))
  done
  echo "Installed $placed skills into $root"
done
if [ ${#skill_roots[@]} -eq 0 ]; then
  echo "Skills not installed: neither ~/.claude nor ~/.codex exists."
  echo "  Set FORGE_SKILLS_DIR=<dir> and run ./install.sh again to install them there."
fi

# The manifest: this run's entries, then earlier ones still present; one line per path.
make_dir "$STATE_DIR"
next_manifest=$(mktemp "$STATE_DIR/.install-manifest.XXXXXX")
{
  printf '# Forge install manifest: written by install.sh, read by uninstall.sh.\n'
  printf '# kind<TAB>path[<TAB>link target]; kinds: link, skill, dir (removed only when empty).\n'
  {
    printf '%s\n' "${entries[@]}"
    if [ -f "$MANIFEST" ]; then grep -v '^#' "$MANIFEST" || true; fi
  } | while IFS=$'\t' read -r kind path rest; do
    if [ -z "$path" ] || { [ ! -e "$path" ] && [ ! -L "$path" ]; }; then continue; fi
    if [ -n "$rest" ]; then
      printf '%s\t%s\t%s\n' "$kind" "$path" "$rest"
    else
      printf '%s\t%s\n' "$kind" "$path"
    fi
  done | awk -F '\t' '!seen[$2]++'
} >"$next_manifest"
mv "$next_manifest" "$MANIFEST"
echo "Manifest: $MANIFEST"

# ---- check the result ----

for name in "${COMMANDS[@]}"; do
  version=$("$BIN_DIR/$name" --version 2>&1) ||
    die "$BIN_DIR/$name --version failed: $version" 'Run ./install.sh again; if it persists, run "npm ci && npm run build" here.'
done
echo "Forge $version installed."
case ":${PATH:-}:" in
  *":$BIN_DIR:"*) ;;
  *)
    echo "note: $BIN_DIR is not on your PATH. Add it, e.g. in ~/.bashrc or ~/.zshrc:"
    echo "  export PATH=\"$BIN_DIR:\$PATH\""
    ;;
esac
echo "Next, in a git repository: forge-pack init, then forge-pack doctor."
