#!/bin/sh
# Adds Babelfind to the desktop's application menu for this user, from the bundle:
#
#   installers/linux/install-desktop-entry.sh [BUNDLE]      # default: dist/babelfind
#
# Copies the bundle to ~/.local/opt/babelfind, links both executables into ~/.local/bin
# and installs the .desktop entry and icons under ~/.local/share (XDG locations).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
BUNDLE=$(cd "${1:-$HERE/../../dist/babelfind}" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
TARGET=$HOME/.local/opt/babelfind

[ -x "$BUNDLE/babelfind-gui" ] || { echo "no bundle in $BUNDLE (run 'make installer')" >&2; exit 1; }
mkdir -p "$HOME/.local/opt" "$HOME/.local/bin" "$DATA/applications" \
         "$DATA/icons/hicolor/scalable/apps" "$DATA/icons/hicolor/256x256/apps"
rm -rf "$TARGET"
cp -a "$BUNDLE" "$TARGET"
ln -sf "$TARGET/babelfind" "$HOME/.local/bin/babelfind"
ln -sf "$TARGET/babelfind-gui" "$HOME/.local/bin/babelfind-gui"
sed "s|^Exec=babelfind-gui|Exec=$TARGET/babelfind-gui|; s|^TryExec=babelfind-gui|TryExec=$TARGET/babelfind-gui|" \
    "$HERE/babelfind.desktop" > "$DATA/applications/babelfind.desktop"
cp "$HERE/babelfind.svg" "$DATA/icons/hicolor/scalable/apps/babelfind.svg"
cp "$HERE/babelfind.png" "$DATA/icons/hicolor/256x256/apps/babelfind.png"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$DATA/applications" || true
echo "installed: $TARGET (menu entry: Babelfind)"
