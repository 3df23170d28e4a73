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
  # Qt's offscreen/xcb platform plugins (the xcb plugin aborts the app without its libxcb-*
  # libraries on a minimal desktop); the fonts the OCR pages are rendered with
  # (desktop/core/ocr/rendered_pages.py FONT_FILES: DejaVu, Liberation, Noto CJK; the table
  # pages of devkit/table_pages.py also DejaVu Sans Condensed, from fonts-dejavu-extra); the capture
  # tests' own X server, its XTEST mouse (xdotool), a private D-Bus and gdbus for the fake
  # portal; Tesseract with the OCR benchmark's languages (bench/ocr_engines.py: the suite runs
  # every bench's --smoke); qpdf checks the searchable PDFs the OCR writes
  # (tests/ocr/test_searchable_pdf.py); libX11 for the global shortcut's key grab
  # (desktop/gui/tray/x11.py).
  local pkgs=(libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3
              libglib2.0-0 fonts-dejavu-core fonts-dejavu-extra fonts-liberation fonts-noto-cjk
              libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
              libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcb-xfixes0
              libxcb-sync1 libxcb-shm0 libx11-6 xvfb xdotool dbus-daemon libglib2.0-bin
              tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-deu
              tesseract-ocr-fra tesseract-ocr-spa tesseract-ocr-pol tesseract-ocr-ces qpdf)
  command -v dpkg >/dev/null || return 0  # not Debian/Ubuntu: the app's start-up check says what is missing
  local missing=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  elif command -v apt-get >/dev/null && command -v sudo >/dev/null && [ -t 0 ]; then
    echo "DeskLens needs these system libraries: ${missing[*]}" >&2
    sudo apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "DeskLens needs these system libraries; install them with:" >&2
    echo "  sudo apt-get install ${missing[*]}" >&2
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
    "$VENV/bin/python" -m devkit.ocr_tiny fetch  # bench/ocr_cascade.py's tiny recognizer
    # Two workers (pytest-xdist), a test file each at a time: the suite waits on threads,
    # servers and child processes for much of its time. DESKLENS_TEST_WORKERS=0: one process.
    # The files in the order tests/conftest.py gives (the longest first).
    exec "$VENV/bin/python" -m pytest -n "${DESKLENS_TEST_WORKERS:-2}" --dist loadfile \
      --no-loadscope-reorder "$@" ;;
  convert)
    venv "[convert]"
    exec "$VENV/bin/python" convert.py "$@" ;;
  *)
    echo "usage: scripts/dev.sh app|test|convert [args]" >&2; exit 2 ;;
esac
