#!/usr/bin/env bash
# The Corpus tab at scale, measured: N generated captures (10,000 by default) in the captures
# folder of a fresh profile, the release app under Xvfb with SSE_REPLAY_TIMING, the Corpus tab
# clicked; prints when the first rows were drawn, when the load finished, and the app's frame
# timing lines (ui build per frame; "slow frame" for any over 16 ms) while loading, while
# scrolling the table and while typing a filter; then takes docs/screenshots/corpus.png.
# Needs: xvfb xdotool imagemagick (see the headless GUI notes) and a release build
# (`cargo build --release`).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-10000}"
BIN="${SSE_REPLAY:-target/release/sse-replay}"
SHOT="${SHOT:-docs/screenshots/corpus.png}"
D=":${DISPLAY_NO:-97}"
work="$(mktemp -d)"
cleanup() {
    [ -n "${APP:-}" ] && kill "$APP" 2>/dev/null || true
    [ -n "${XVFB:-}" ] && kill "$XVFB" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" LANG=en_US.UTF-8
"$BIN" generate-corpus -o "$XDG_DATA_HOME/sse-replay/captures" --count "$N" --seed 21
Xvfb "$D" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 & XVFB=$!
DISPLAY="$D" SSE_REPLAY_TIMING=1 "$BIN" > "$work/app.log" 2>&1 & APP=$!
DISPLAY="$D" xdotool search --sync --onlyvisible --name sse-replay > /dev/null
# Wait (bounded) until the first frame was drawn.
for _ in $(seq 100); do grep -q "first full frame" "$work/app.log" && break; sleep 0.1; done
phase() { # name: the timing lines since the last phase
    echo "== $1"
    tail -n +"$((${MARK:-0} + 1))" "$work/app.log" | grep "timing:" || true
    MARK=$(wc -l < "$work/app.log")
}
MARK=$(wc -l < "$work/app.log")
DISPLAY="$D" xdotool mousemove 523 37 click 1          # the Corpus tab
for _ in $(seq 600); do grep -q "corpus loaded" "$work/app.log" && break; sleep 0.1; done
phase "click on Corpus → first rows drawn, load finished, frames while loading"
sleep 2.5; phase "idle"
DISPLAY="$D" xdotool mousemove 460 460
for _ in $(seq 60); do DISPLAY="$D" xdotool click 5; sleep 0.03; done   # wheel down
for _ in $(seq 30); do DISPLAY="$D" xdotool click 4; sleep 0.03; done   # wheel up
sleep 2.5; phase "scrolling the table (90 wheel steps)"
DISPLAY="$D" xdotool mousemove 916 84 click 1            # the Text filter
DISPLAY="$D" xdotool type --delay 120 "openai"
sleep 2.5; phase "typing a filter (6 characters, each re-filtering every row)"
DISPLAY="$D" xdotool mousemove 460 460
for _ in $(seq 30); do DISPLAY="$D" xdotool click 5; sleep 0.03; done
sleep 2.5; phase "scrolling the filtered table"
DISPLAY="$D" xdotool mousemove 1200 960                  # out of the way of the screenshot
sleep 1
DISPLAY="$D" import -window root -crop 1500x940+0+0 "$SHOT"
echo "screenshot: $SHOT"
