#!/bin/sh
# Adds DeskLens (this unpacked folder, wherever it is) to the current user's application menu
# and puts `desklens` on ~/.local/bin; no root needed. `./install.sh --uninstall` undoes it.
# The folder itself stays read-only: models and history live in ~/.local/share/DeskLens.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
apps=$data/applications
icons=$data/icons/hicolor/256x256/apps
bin=$HOME/.local/bin

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$apps/desklens.desktop" "$icons/desklens.png"
  if [ -L "$bin/desklens" ]; then rm -f "$bin/desklens"; fi
  echo "DeskLens removed from the menu; $here and your data in $data/DeskLens are untouched."
  exit 0
fi

mkdir -p "$apps" "$icons" "$bin"
cp "$here/desklens.png" "$icons/desklens.png"
# Exec quotes the path (it may contain spaces) and keeps %F (files from "Open with");
# TryExec takes it unquoted.
sed -e "s|^Exec=.*|Exec=\"$here/desklens\" %F|" -e "s|^TryExec=.*|TryExec=$here/desklens|" \
  "$here/desklens.desktop" > "$apps/desklens.desktop"
ln -sf "$here/desklens" "$bin/desklens"
if command -v update-desktop-database >/dev/null 2>&1; then
  update-desktop-database -q "$apps" || true
fi
echo "DeskLens added to the application menu; run 'desklens' from a terminal (~/.local/bin)."
