#!/usr/bin/env bash
# One entry point that sets everything up on a fresh machine, then runs what was asked:
#   scripts/dev.sh app [desklens args]   install the app (no torch) and start DeskLens
#   scripts/dev.sh test [pytest args]    install app + convert + test extras, run the test suite
#   scripts/dev.sh convert [args]        install the convert extra and run convert.py
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${DESKLENS_VENV:-.venv}
PY=${PYTHON:-python3}

system_deps() {
  # Qt's offscreen/xcb platform plugins and the fonts the OCR tests render with.
  local pkgs=(libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3
              libglib2.0-0 fonts-dejavu-core)
  local missing=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

venv() {
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e ".$1"
}

cmd=${1:-}; shift || true
case "$cmd" in
  app)
    system_deps; venv ""
    exec "$VENV/bin/desklens" "$@" ;;
  test)
    system_deps; venv "[convert,test]"
    exec "$VENV/bin/python" -m pytest "$@" ;;
  convert)
    venv "[convert]"
    exec "$VENV/bin/python" convert.py "$@" ;;
  *)
    echo "usage: scripts/dev.sh app|test|convert [args]" >&2; exit 2 ;;
esac
