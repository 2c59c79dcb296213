#!/bin/sh
# SPDX-License-Identifier: MIT
# Opens a report page in headless chromium and checks what its script drew: it writes one line
# per chart, canvas and table into #render-check ("chart-ranks WxH shapes=N", "timeline lanes=N
# ops=N ranks=N folded=N WxH", "heatmap rows=N cols=N cells=N WxH", "table ID rows=N").
# Every SVG chart must have a size and shapes, the timeline lanes, no drawing may have thrown;
# each further argument is text that must appear on one of those lines.
# Usage: html_render_check.sh REPORT.html [EXPECTED...]
set -eu
page=$1
shift
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium not installed (scripts/install-deps.sh --tests): skipping"
  exit 77
fi
dom=$("$browser" --headless --no-sandbox --disable-gpu --window-size=1400,1000 \
  --dump-dom "file://$(realpath "$page")" 2>/dev/null)
lines=$(printf '%s\n' "$dom" | sed -n '/id="render-check"/,/<\/pre>/p' | sed 's/<[^>]*>//g')
printf '%s\n' "$lines"
status=0
for chart in chart-ranks chart-busbw chart-trend; do
  printf '%s\n' "$lines" | grep -Eq "^$chart [1-9][0-9]*x[1-9][0-9]* shapes=[1-9]" ||
    { echo "FAIL: $chart did not render"; status=1; }
done
printf '%s\n' "$lines" | grep -Eq "^timeline lanes=[1-9]" || { echo "FAIL: no timeline lanes"; status=1; }
printf '%s\n' "$lines" | grep -Eq "^heatmap rows=[1-9]" || { echo "FAIL: no heatmap rows"; status=1; }
if printf '%s\n' "$lines" | grep -q "^error in"; then echo "FAIL: the script threw"; status=1; fi
for expected in "$@"; do
  printf '%s\n' "$lines" | grep -Fq -- "$expected" || { echo "FAIL: no line with '$expected'"; status=1; }
done
[ $status -eq 0 ] && echo "ok"
exit $status
