#!/bin/sh
# pyenv.sh — makes .venv: a virtualenv over Debian's /usr/bin/python3 (which has python3-torch)
# with the pinned packages of tools/requirements.txt. Prints the venv's python on success.
# A no-op when .venv already has them. Exit status 3 when PyPI cannot be reached.
#
#   PY=$(sh tools/pyenv.sh) || echo "no reference venv"
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${TIDE_VENV:-$root/.venv}
req=$root/tools/requirements.txt
stamp=$venv/.tide-requirements
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
    echo "$venv/bin/python"
    exit 0
fi
/usr/bin/python3 -m venv --system-site-packages "$venv" >&2
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2; then
    echo "pyenv: pip could not install tools/requirements.txt (no PyPI here?)" >&2
    exit 3
fi
cp "$req" "$stamp"
echo "$venv/bin/python"
