#!/bin/sh
# SPDX-License-Identifier: MIT
# Opens a report page in headless chromium and checks that each SVG chart was laid out with
# shapes in it (the page's own script writes "<id> WxH shapes=N" into #render-check).
# Usage: html_render_check.sh REPORT.html
set -eu
page=$1
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not installed (scripts/install-deps.sh --tests): skipping"
  exit 77
fi
dom=$("$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$(realpath "$page")" 2>/dev/null)
status=0
for chart in chart-ranks chart-busbw chart-timeline; do
  line=$(printf '%s\n' "$dom" | grep -o "$chart [0-9]*x[0-9]* shapes=[0-9]*" || true)
  case "$line" in
    "$chart 0x"* | *"x0 "* | *"shapes=0" | "") echo "FAIL: $chart did not render ($line)"; status=1 ;;
    *) echo "ok: $line" ;;
  esac
done
exit $status
