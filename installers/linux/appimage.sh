#!/bin/sh
# Wraps the one-folder bundle (make installer -> dist/babelfind/) into an AppImage:
#
#   make installer && installers/linux/appimage.sh          # -> dist/Babelfind-x86_64.AppImage
#
# Needs appimagetool on PATH (or APPIMAGETOOL=/path/to/appimagetool); it is not on PyPI,
# so fetch it from the AppImage project on a machine with internet. Without it the script
# still lays out dist/Babelfind.AppDir, which any AppImage tool (or a plain copy to
# /opt/babelfind) can take from there. The AppImage opens the window; the CLI inside is
# reached with `Babelfind-x86_64.AppImage cli search ...`.
set -eu

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUNDLE=$REPO/dist/babelfind
APPDIR=$REPO/dist/Babelfind.AppDir
ARCH=${ARCH:-$(uname -m)}
TOOL=${APPIMAGETOOL:-appimagetool}

[ -x "$BUNDLE/babelfind-gui" ] || { echo "appimage.sh: run 'make installer' first (no $BUNDLE)" >&2; exit 1; }

rm -rf "$APPDIR"
mkdir -p "$APPDIR/usr/share/applications" "$APPDIR/usr/share/icons/hicolor/scalable/apps" \
         "$APPDIR/usr/share/icons/hicolor/256x256/apps"
cp -a "$BUNDLE" "$APPDIR/usr/babelfind"
cp "$REPO/installers/linux/babelfind.desktop" "$APPDIR/babelfind.desktop"
cp "$REPO/installers/linux/babelfind.desktop" "$APPDIR/usr/share/applications/"
cp "$REPO/installers/linux/babelfind.svg" "$APPDIR/usr/share/icons/hicolor/scalable/apps/"
cp "$REPO/installers/linux/babelfind.png" "$APPDIR/usr/share/icons/hicolor/256x256/apps/"
cp "$REPO/installers/linux/babelfind.png" "$APPDIR/babelfind.png"
ln -s babelfind.png "$APPDIR/.DirIcon"
cat > "$APPDIR/AppRun" <<'RUN'
#!/bin/sh
# `AppImage cli ARGS` runs the command line, anything else opens the window.
HERE=$(dirname "$(readlink -f "$0")")
if [ "${1:-}" = cli ]; then shift; exec "$HERE/usr/babelfind/babelfind" "$@"; fi
exec "$HERE/usr/babelfind/babelfind-gui" "$@"
RUN
chmod +x "$APPDIR/AppRun"

if command -v "$TOOL" >/dev/null 2>&1; then
    ARCH=$ARCH "$TOOL" "$APPDIR" "$REPO/dist/Babelfind-$ARCH.AppImage"
    echo "written: $REPO/dist/Babelfind-$ARCH.AppImage"
else
    echo "appimage.sh: $TOOL not found; the AppDir is ready in $APPDIR" >&2
    echo "appimage.sh: run 'appimagetool $APPDIR' where it is installed" >&2
fi
