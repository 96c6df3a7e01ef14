# Sourced by .ci/run: the optional programs some formats need (docs/formats.md), so CI runs
# the tests that use them; every such test also skips cleanly when they are absent.
# antiword reads .doc; Tesseract with its English pack reads images and scanned pages.
missing=""
command -v antiword >/dev/null || missing="$missing antiword"
command -v tesseract >/dev/null || missing="$missing tesseract-ocr tesseract-ocr-eng"
if [ -n "$missing" ]; then
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
    echo "installed:$missing"
  else
    echo "could not install$missing: their tests skip"
  fi
fi
