#!/usr/bin/env bash
# The degenerate clients of docs/sdk-clients.md on the whole built-in suite: every dialect named
# (so none is skipped as "not spoken"), every variant, both faults. From the repository's root,
# after `cargo build --bins`:
#   docs/sdk-measurements/degenerate/run.sh OUT-DIR
# Each client writes OUT-DIR/<name>.json (--json) and OUT-DIR/<name>.txt (the matrix).
set -u
OUT=${1:?usage: run.sh OUT-DIR}
mkdir -p "$OUT/seed7"
OUT=$(cd "$OUT" && pwd)
B=${SSE_REPLAY:-$PWD/target/debug/sse-replay}
E=${EXPORT_CLIENT:-$PWD/target/debug/sse-replay-example-client-export}
D=openai-chat,openai-responses,anthropic-messages,gemini,ollama,cohere,openai-assistants,ai-sdk-ui,bedrock-converse
run() { name=$1; seed=$2; shift 2
  "$B" test --dialect $D --faults all --random-seed "$seed" -j 2 --json -- "$@" \
    > "$OUT/$name.json" 2> "$OUT/$name.txt"
  echo "$name (seed $seed): exit $?"
}
# The correct calls of a previous run: export of a bundled recording, as the client contract's JSON.
FIXED=$("$B" export recordings/openai-chat-weather.ron | python3 -c 'import json,sys
print(json.dumps([{k: c[k] for k in ("name", "arguments", "id")} for c in json.load(sys.stdin)], ensure_ascii=False))')
# A run of the export-echo client (seed 7) whose answers, per recording and variant, later
# clients print: without connecting, or after reading their own stream.
run export-echo 7 "$E" "$B"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for c in json.load(open(f"{out}/export-echo.json"))["cases"]:
    name = c["recording"].replace("/", "_") + "." + c["variant"] + ".json"
    open(f"{out}/seed7/{name}", "w").write(json.dumps(c["got"], ensure_ascii=False))
PY
LOOKUP="cat \"$OUT/seed7/\$(printf %s \"\$SSE_REPLAY_RECORDING\" | tr / _).\$SSE_REPLAY_VARIANT.json\""
run prints-empty 7 sh -c "echo '[]'"
run exits-1 7 sh -c 'exit 1'
run random-json 7 sh -c 'echo "[{\"name\":\"x$$\",\"arguments\":{\"r\":$$}}]"'
run crashes 7 sh -c 'kill -SEGV $$'
run fixed-answer 7 sh -c "echo '$FIXED'"
run reads-then-fixed-answer 7 sh -c "\"\$0\" --fetch-only; echo '$FIXED'" "$E"
run reads-then-empty 7 sh -c "\"\$0\" --fetch-only; echo '[]'" "$E"
run earlier-answers-no-connect 8 sh -c "$LOOKUP"
run reads-then-earlier-answers 8 sh -c "\"\$0\" --fetch-only; $LOOKUP" "$E"
run earlier-answers-no-connect-same-seed 7 sh -c "$LOOKUP"
run reads-then-earlier-answers-same-seed 7 sh -c "\"\$0\" --fetch-only; $LOOKUP" "$E"
run export-echo-seed8 8 "$E" "$B"
