#!/usr/bin/env bash
# Build, write the HTML report of `acp simulate` for a session or a folder, and render it with headless
# Chromium to a PNG (to look at the page without a browser). Prints the PNG path.
#   scripts/report-screenshot.sh [path] [strategies] [html] [png]
# defaults: examples/session.json, none,verbose,balanced,compact, /tmp/acp-report.html, /tmp/acp-report.png
set -euo pipefail
cd "$(dirname "$0")/.."

SESSIONS="${1:-examples/session.json}"
COMPARE="${2:-none,verbose,balanced,compact}"
HTML="${3:-/tmp/acp-report.html}"
PNG="${4:-/tmp/acp-report.png}"
WINDOW="${ACP_SCREENSHOT_WINDOW:-1400,2400}"

CHROMIUM="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$CHROMIUM" ]; then
  echo "chromium not found (apt-get update && apt-get install -y chromium)" >&2
  exit 2
fi

npm run -s build >&2
node bin/acp.js simulate "$SESSIONS" --compare "$COMPARE" --html "$HTML" >&2

PROFILE="$(mktemp -d)"
trap 'rm -rf "$PROFILE"' EXIT
"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$PROFILE" --screenshot="$PNG" --window-size="$WINDOW" "file://$HTML" >/dev/null 2>&1
test -s "$PNG"
echo "$PNG"
