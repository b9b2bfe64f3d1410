#!/usr/bin/env bash
# Removes what install.sh placed, exactly as its manifest lists it, and then the manifest.
# Nothing else is touched: a listed path that is no longer what install.sh put there is left alone.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: ./uninstall.sh

Removes the ralph-loop and forge-pack links and the skills that ./install.sh placed, as listed in
its manifest (FORGE_STATE_DIR, default ${XDG_DATA_HOME:-~/.local/share}/forge/install-manifest.txt),
then the manifest itself. Directories install.sh created are removed only when empty. A listed
path that was changed since (a link pointing elsewhere, a skill directory without Forge's marker
file, or with a file added, edited or removed) is left in place and reported. Your repositories' .forge/ and .beads/ are never touched.
EOF
}

case "${1:-}" in
  -h | --help)
    usage
    exit 0
    ;;
  '') ;;
  *)
    printf 'uninstall.sh: unknown argument: %s\n' "$1" >&2
    usage >&2
    exit 2
    ;;
esac

: "${HOME:?HOME is not set}"
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

if [ ! -f "$MANIFEST" ]; then
  echo "Nothing to uninstall: no manifest at $MANIFEST."
  echo "(If you installed with npm install -g, run: npm uninstall -g forge-loop)"
  exit 0
fi

removed=0
kept=0
dirs=()
while IFS=$'\t' read -r kind path target; do
  case "$kind" in
    '' | '#'*) continue ;;
  esac
  if [ ! -e "$path" ] && [ ! -L "$path" ]; then
    echo "Already gone: $path"
    continue
  fi
  case "$kind" in
    link)
      if [ -L "$path" ] && [ "$(readlink "$path")" = "$target" ]; then
        rm -f "$path"
        echo "Removed $path"
        removed=$((removed + 1))
      else
        echo "Left in place (no longer the link install.sh made): $path"
        kept=$((kept + 1))
      fi
      ;;
    skill)
      if [ -d "$path" ] && [ ! -L "$path" ] && [ -f "$path/$SKILL_MARKER" ] && skill_changed "$path"; then
        echo "Left in place (changed since install.sh placed it): $path"
        kept=$((kept + 1))
      elif [ -d "$path" ] && [ ! -L "$path" ] && [ -f "$path/$SKILL_MARKER" ]; then
        rm -rf "$path"
        echo "Removed $path"
        removed=$((removed + 1))
      else
        echo "Left in place (not the skill install.sh copied): $path"
        kept=$((kept + 1))
      fi
      ;;
    dir) dirs+=("$path") ;;
    *)
      echo "Left in place (unknown manifest entry '$kind'): $path"
      kept=$((kept + 1))
      ;;
  esac
done <"$MANIFEST"

rm -f "$MANIFEST"
# Directories last, deepest first, and only when nothing else lives in them.
if [ ${#dirs[@]} -gt 0 ]; then
  while IFS= read -r dir; do
    if rmdir "$dir" 2>/dev/null; then
      echo "Removed empty directory $dir"
    fi
  done < <(printf '%s\n' "${dirs[@]}" | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f 2-)
fi

rmdir "$STATE_DIR" 2>/dev/null || true
if [ "$kept" -gt 0 ]; then
  echo "Forge uninstalled: $removed path(s) removed, $kept left in place (see above)."
else
  echo "Forge uninstalled: $removed path(s) removed."
fi
