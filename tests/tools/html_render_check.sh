#!/bin/sh
# SPDX-License-Identifier: MIT
# Opens a report page in headless chromium and checks what its script drew: it writes one line
# per chart, canvas and table into #render-check ("chart-ranks WxH shapes=N", "timeline lanes=N
# ops=N ranks=N folded=N WxH", "heatmap rows=N cols=N cells=N WxH", "table ID rows=N"), and for
# each canvas what it painted, read back from its pixels ("timeline drawn ops=D/N lanes=P/M
# pixels=X", "heatmap drawn cells=D/N rows=P/M pixels=X").
# Every SVG chart must have a size and shapes, the timeline lanes; every op and heatmap cell of
# the data must have been drawn inside its canvas (D = N), every lane and row that holds some must
# show painted pixels (P = M), and no drawing may have thrown. The script's text of every table
# row the page holds must be the page's own ("tables formatted cells=N mismatched=0": what it
# draws on later pages of a long table is written alike), and where the timeline has a critical
# path, every segment of its lane must be drawn, with pixels painted ("timeline path segments=N
# ranks=R outlined=K drawn=N/N pixels=X"). In the first lane with an op six device columns wide
# or more (else the first lane with ops: one of sub-pixel transfers has nothing inside to probe),
# every column inside an op must be painted and none clear of them ("timeline probe lane=K
# inside=B/B outside=0/D", worked
# out by the page from the ops' times, not from the drawing's geometry). Each further argument is
# text that must appear on one of those lines.
# Without chromium it exits 77 (CTest: skipped), or 1 under COMMPROF_REQUIRE_BROWSER=1 (a host
# that installed it, CI: a skip there would hide the rendering).
# Usage: html_render_check.sh REPORT.html [EXPECTED...]
set -eu
page=$1
shift
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  if [ "${COMMPROF_REQUIRE_BROWSER:-0}" = 1 ]; then
    echo "html_render_check.sh: COMMPROF_REQUIRE_BROWSER=1, but chromium is not installed: failed"
    exit 1
  fi
  echo "html_render_check.sh: skipped: chromium not installed (scripts/install-deps.sh --tests)"
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
# drawn CANVAS ITEMS BANDS: the canvas's "drawn" line says every item of the data got a rectangle
# inside it and every band holding items shows painted pixels; at least one item for the timeline.
drawn() {
  line=$(printf '%s\n' "$lines" | grep -E "^$1 drawn $2=[0-9]+/[0-9]+ $3=[0-9]+/[0-9]+ pixels=[0-9]+$" || true)
  if [ -z "$line" ]; then
    echo "FAIL: no line '$1 drawn $2=D/N $3=P/M pixels=X'"; status=1; return
  fi
  nums=$(printf '%s\n' "$line" | sed 's/^.* drawn [a-z]*=\([0-9]*\)\/\([0-9]*\) [a-z]*=\([0-9]*\)\/\([0-9]*\) pixels=\([0-9]*\)$/\1 \2 \3 \4 \5/')
  # shellcheck disable=SC2086  # five numbers, split on purpose: $2..$6 = D N P M X
  set -- "$1" $nums
  [ "$2" -eq "$3" ] || { echo "FAIL: $1: $2 of $3 items drawn inside the canvas"; status=1; }
  [ "$4" -eq "$5" ] || { echo "FAIL: $1: $4 of $5 bands with items show painted pixels"; status=1; }
  [ "$3" -eq 0 ] || [ "$6" -gt 0 ] || { echo "FAIL: $1: $3 items, no pixel painted"; status=1; }
}
drawn timeline ops lanes
printf '%s\n' "$lines" | grep -Eq "^timeline drawn ops=[0-9]+/[1-9]" || { echo "FAIL: no timeline op to draw"; status=1; }
drawn heatmap cells rows
# Where the first lane with a wide enough op must be painted, worked out by the page from the ops' times alone:
# every column inside an op painted (and some such column), none clear of the ops painted.
probed() {  # inside painted, inside columns, clear painted
  { [ "$2" -gt 0 ] && [ "$1" -eq "$2" ]; } ||
    { echo "FAIL: timeline probe: $1 of $2 columns inside an op painted"; status=1; }
  [ "$3" -eq 0 ] || { echo "FAIL: timeline probe: $3 columns clear of every op painted"; status=1; }
}
probe=$(printf '%s\n' "$lines" | sed -n 's/^timeline probe lane=[0-9]* inside=\([0-9]*\)\/\([0-9]*\) outside=\([0-9]*\)\/[0-9]*$/\1 \2 \3/p')
if [ -z "$probe" ]; then
  echo "FAIL: no line 'timeline probe lane=K inside=A/B outside=C/D'"; status=1
else
  # shellcheck disable=SC2086  # three numbers, split on purpose
  probed $probe
fi
printf '%s\n' "$lines" | grep -Eq "^tables formatted cells=[1-9][0-9]* mismatched=0$" ||
  { echo "FAIL: the script's table cells differ from the page's (or none were compared)"; status=1; }
path=$(printf '%s\n' "$lines" | grep -E "^timeline path " || true)
if [ -n "$path" ]; then
  nums=$(printf '%s\n' "$path" | sed -n 's/^timeline path segments=\([1-9][0-9]*\) ranks=[1-9][0-9]* outlined=[0-9]* drawn=\([0-9]*\)\/[0-9]* pixels=\([0-9]*\)$/\1 \2 \3/p')
  segs=${nums%% *} rest=${nums#* }
  if [ -z "$nums" ] || [ "$segs" -ne "${rest%% *}" ] || [ "${rest#* }" -eq 0 ]; then
    echo "FAIL: the critical path's lane was not drawn in full: $path"; status=1
  fi
fi
if printf '%s\n' "$lines" | grep -q "^error in"; then echo "FAIL: the script threw"; status=1; fi
for expected in "$@"; do
  printf '%s\n' "$lines" | grep -Fq -- "$expected" || { echo "FAIL: no line with '$expected'"; status=1; }
done
[ $status -eq 0 ] && echo "ok"
exit $status
