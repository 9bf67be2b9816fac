#!/usr/bin/env bash
# Screenshots of the app for the README, taken under Xvfb (no GPU, no desktop needed).
#
#   scripts/screenshots.sh [BINARY] [OUT_DIR]
#
# BINARY defaults to target/release/sse-replay, OUT_DIR to docs/screenshots. Writes:
#   seed-1600x1000.png       the bundled seed example at a desktop size
#   seed-1024x700.png        the same on a laptop screen (the comparison keeps half the height)
#   two-line-title-1024x700.png   a recording whose title wraps to two lines, on a laptop screen
#   two-line-title-1600x1000.png  the same at a desktop size, the event list open
#   event-inspector.png      an OpenAI Chat recording, one event selected: its JSON and arguments piece
#   compare-two.png          Compare two: the seed example against a quirky recording
#   proxy-flow-1600x1000.png the Proxy tab: a flow streaming through it, selected (its events so far)
#   proxy-live-1024x700.png  that flow watched live in Replay on a laptop screen (no verdict yet)
# Needs (Debian/Ubuntu): xvfb xdotool imagemagick libegl1 libegl-mesa0 libgl1-mesa-dri
#   libxcursor1 libxi6 libxkbcommon-x11-0
# The app runs with a throw-away HOME (no settings of yours are read or written) and with the
# in-app file browser (SSE_REPLAY_DIALOG=builtin) so that a second recording can be opened by
# typing its path. Clicks are at window coordinates; the window is at +0+0 (no window manager).
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${1:-target/release/sse-replay}
OUT=${2:-docs/screenshots}
[ -x "$BIN" ] || { echo "screenshots: no executable at $BIN (cargo build --release)" >&2; exit 2; }
for tool in Xvfb xdotool import curl; do
    command -v "$tool" >/dev/null || { echo "screenshots: $tool is missing (apt-get install xvfb xdotool imagemagick)" >&2; exit 2; }
done
mkdir -p "$OUT"
BIN=$(realpath "$BIN")
REPO=$(pwd)
HOME_DIR=$(mktemp -d)
DISPLAY_NO=${SCREENSHOT_DISPLAY:-97}
export DISPLAY=:$DISPLAY_NO HOME=$HOME_DIR XDG_CONFIG_HOME=$HOME_DIR/.config XDG_DATA_HOME=$HOME_DIR/.local/share
export LANG=${LANG:-C.UTF-8} SSE_REPLAY_DIALOG=builtin
unset WAYLAND_DISPLAY
XVFB_PID= APP_PID=
cleanup() {
    if [ -n "$APP_PID" ]; then kill "$APP_PID" 2>/dev/null || true; fi
    if [ -n "$XVFB_PID" ]; then kill "$XVFB_PID" 2>/dev/null || true; fi
    rm -rf "$HOME_DIR"
}
trap cleanup EXIT

start_x() { # WIDTH HEIGHT (a new display each time: the old one's lock may linger)
    stop_app
    if [ -n "$XVFB_PID" ]; then kill "$XVFB_PID" 2>/dev/null || true; wait "$XVFB_PID" 2>/dev/null || true; fi
    DISPLAY_NO=$((DISPLAY_NO + 1))
    export DISPLAY=:$DISPLAY_NO
    Xvfb ":$DISPLAY_NO" -screen 0 "${1}x${2}x24" -nolisten tcp >/dev/null 2>&1 &
    XVFB_PID=$!
    for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "screenshots: Xvfb did not start on :$DISPLAY_NO" >&2
    exit 1
}

start_app() { # WIDTH HEIGHT [FILE]
    stop_app
    "$BIN" ${3:+"$3"} >/dev/null 2>&1 &
    APP_PID=$!
    local win
    win=$(xdotool search --sync --onlyvisible --name 'sse-replay' | head -1)
    xdotool windowmove "$win" 0 0 windowsize "$win" "$1" "$2"
    # No window manager: give the window the keyboard focus, or typed text goes nowhere.
    xdotool windowfocus --sync "$win"
    sleep 2
}

stop_app() {
    if [ -n "$APP_PID" ]; then kill "$APP_PID" 2>/dev/null || true; wait "$APP_PID" 2>/dev/null || true; fi
    APP_PID=
}

shot() { import -window root "$OUT/$1"; echo "wrote $OUT/$1"; }
click() { xdotool mousemove "$1" "$2" click 1; sleep 0.7; }

# 1. The seed example, desktop and laptop sizes.
start_x 1600 1000
start_app 1600 1000
shot seed-1600x1000.png
start_x 1024 700
start_app 1024 700
shot seed-1024x700.png

# 1b. A title that wraps to two lines (the layout holds), laptop and desktop sizes.
start_x 1024 700
start_app 1024 700 "$REPO/recordings/quirk-cumulative.ron"
shot two-line-title-1024x700.png
start_x 1600 1000
start_app 1600 1000 "$REPO/recordings/quirk-cumulative.ron"
shot two-line-title-1600x1000.png

# 2. The event inspector on an OpenAI Chat recording, an event in the middle selected (a row of
#    the event list, the lowest panel: EVENT_ROW_Y moves the click if the layout changes).
start_x 1600 1000
start_app 1600 1000 "$REPO/recordings/openai-chat-weather.ron"
click 300 "${EVENT_ROW_Y:-872}"
xdotool mousemove 800 500
sleep 0.5
shot event-inspector.png

# 3. Compare two: the seed (opened at start, taken as A with "Use Replay's") against a recording whose arguments differ, opened
#    through the in-app file browser (type the path into its "File:" field, Enter).
start_app 1600 1000
click "${COMPARE_TAB_X:-117}" "${COMPARE_TAB_Y:-37}"
click "${USE_REPLAY_A_X:-132}" "${USE_REPLAY_A_Y:-115}"   # A: "Use Replay's" (the seed)
sleep 1
click "${OPEN_B_X:-840}" "${OPEN_B_Y:-115}"               # B: "Open B…"
click "${FILE_FIELD_X:-770}" "${FILE_FIELD_Y:-695}"
# B by default: the seed's two calls with one value changed, built by the stub builder (so the
# arguments diff inline: the changed value highlighted).
if [ -z "${COMPARE_WITH:-}" ]; then
    COMPARE_WITH=$HOME_DIR/seed-days-changed.ron
    "$BIN" stub --call 'get_weather={"city":"深圳","days":5}' --call 'get_time={"city":"杭州","days":1}' \
        --fragment 5 -o "$COMPARE_WITH" >/dev/null
fi
case $COMPARE_WITH in /*) ;; *) COMPARE_WITH=$REPO/$COMPARE_WITH ;; esac
xdotool type --delay 20 "$COMPARE_WITH"
xdotool key Return
sleep 2
xdotool mousemove 800 900
sleep 0.5
shot compare-two.png
stop_app

# 4. The proxy as a flow inspector: `serve` plays a recording slowly as the upstream, the app's
#    proxy (its form filled from a settings file) forwards a curl request, the flow is selected
#    while it streams, then watched live in Replay. Coordinates: START (the Start proxy button),
#    ROW (the flow's request cell), WATCH (the detail's "Watch live in Replay").
proxy_run() { # WIDTH HEIGHT SHOT [watch]
    local up=${PROXY_UPSTREAM_PORT:-18481} port=${PROXY_PORT:-18480}
    mkdir -p "$XDG_DATA_HOME/sse-replay"
    cat > "$XDG_DATA_HOME/sse-replay/settings.ron" <<EOT
(settings: (tab: Proxy, proxy: (listen: "127.0.0.1:$port", upstream: "http://127.0.0.1:$up", out_dir: "$HOME_DIR/captures")))
EOT
    "$BIN" serve "$REPO/recordings/openai-chat-weather.ron" --speed 0.008 --addr "127.0.0.1:$up" >/dev/null 2>&1 &
    local serve_pid=$!
    start_x "$1" "$2"
    start_app "$1" "$2"
    click "${START_X:-53}" "${START_Y:-207}"
    curl -sN -X POST "http://127.0.0.1:$port/v1/chat/completions" \
        -H 'authorization: Bearer sk-demo-not-a-real-key-0000' -H 'content-type: application/json' \
        -d '{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Weather in 深圳 and Tokyo? 🌧"}]}' \
        >/dev/null 2>&1 &
    local curl_pid=$!
    sleep 3
    click "${ROW_X:-175}" "${ROW_Y:-303}"
    sleep 2
    if [ "${4:-}" = watch ]; then
        click "${WATCH_X:-425}" "${WATCH_Y:-335}"
        sleep 4
    fi
    xdotool mousemove 10 990
    sleep 0.5
    shot "$3"
    stop_app
    kill "$curl_pid" "$serve_pid" 2>/dev/null || true
    wait "$curl_pid" "$serve_pid" 2>/dev/null || true
    rm -f "$XDG_DATA_HOME/sse-replay/settings.ron"
}
proxy_run 1600 1000 proxy-flow-1600x1000.png
proxy_run 1024 700 proxy-live-1024x700.png watch
