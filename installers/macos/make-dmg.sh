#!/bin/sh
# A disk image from the macOS app bundle:
#
#   make installer && installers/macos/make-dmg.sh        # -> dist/Babelfind-0.1.0.dmg
#
# `make installer` on macOS writes dist/Babelfind.app (installers/babelfind.spec, BUNDLE)
# beside dist/babelfind/. The image holds the app and a link to /Applications to drag it
# onto. Unsigned: sign and notarise with codesign/notarytool before sharing it, or users
# open it the first time with right-click > Open.
set -eu

REPO=$(cd "$(dirname "$0")/../.." && pwd)
APP=$REPO/dist/Babelfind.app
VERSION=${VERSION:-0.1.0}
IMAGE=$REPO/dist/Babelfind-$VERSION.dmg

[ "$(uname -s)" = Darwin ] || { echo "make-dmg.sh: hdiutil runs on macOS only" >&2; exit 1; }
[ -d "$APP" ] || { echo "make-dmg.sh: run 'make installer' first (no $APP)" >&2; exit 1; }

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
rm -f "$IMAGE"
hdiutil create -volname Babelfind -srcfolder "$STAGE" -fs HFS+ -format UDZO -ov "$IMAGE"
echo "written: $IMAGE"
