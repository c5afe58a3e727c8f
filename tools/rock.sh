#!/bin/sh
# rock.sh — `make rock`: the release rockspec and the source rock of version TIDE_VERSION.
#
#   build/rock/tide-$V-1.rockspec   rockspec/tide-scm-1.rockspec with version "$V-1" and, as
#                                   source, the tagged archive v$V.tar.gz (top folder tide-$V)
#   build/rock/tide-$V-1.src.rock   that rockspec and the archive, zipped as `luarocks pack`
#                                   would: `luarocks install` builds it with no network
#
# The archive holds the checkout's tracked files as they are now (committed or not: a
# `git stash create` commit when the tree has changes), never untracked or ignored ones; outside
# a git checkout, the tree without its build directories.
set -eu
cd "$(dirname "$0")/.."
V=${TIDE_VERSION:-$(sed -n "s/^TIDE_VERSION *?= *//p" tools/install.mk)}
OUT=${1:-build/rock}
NAME=tide-$V
ARCHIVE=v$V.tar.gz
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/tide-rock-stage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT INT TERM

if git rev-parse --git-dir >/dev/null 2>&1; then
    rev=$(git stash create 2>/dev/null || true)
    git archive --format=tar.gz --prefix="$NAME/" -o "$STAGE/$ARCHIVE" "${rev:-HEAD}"
else # an exported tree without git: everything but what builds and runs leave behind
    tar -czf "$STAGE/$ARCHIVE" --transform "s,^\.,$NAME," --exclude='./build' \
        --exclude='./build-*' --exclude='./models' --exclude='./.gpu' --exclude='./.git' .
fi

# the scm rockspec with this version and the archive as its source
awk -v v="$V" -v url="https://github.com/tide-lua/tide/archive/refs/tags/$ARCHIVE" -v dir="$NAME" '
    /^version = / { print "version = \"" v "-1\""; next }
    /^source = \{/ { print "source = {\n    url = \"" url "\",\n    dir = \"" dir "\",\n}"; skip = 1; next }
    skip && /^\}/ { skip = 0; next }
    !skip { print }' rockspec/tide-scm-1.rockspec >"$STAGE/$NAME-1.rockspec"

rm -f "$OUT/$NAME-1.src.rock"
(cd "$STAGE" && zip -q -X "$OUT/$NAME-1.src.rock" "$NAME-1.rockspec" "$ARCHIVE")
cp "$STAGE/$NAME-1.rockspec" "$OUT/"
echo "rock: $OUT/$NAME-1.src.rock ($(wc -c <"$OUT/$NAME-1.src.rock") bytes)"
