#!/usr/bin/env bash
# Install the real SDK clients from PyPI and npm into this folder:
#   .venv/          openai, anthropic, langchain-openai, boto3 (versions pinned in requirements.txt)
#   node_modules/   openai, ai, @ai-sdk/openai, @ai-sdk/anthropic, @aws-sdk/client-bedrock-runtime, zod (pinned in package.json + package-lock.json)
# Needs python3 (3.9+) with venv, and node 20+ with npm. Not part of cargo test or CI.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -r requirements.txt
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
echo "installed: $(.venv/bin/python -c 'import openai, anthropic, langchain_openai, boto3; print("openai", openai.__version__, "anthropic", anthropic.__version__, "boto3", boto3.__version__)')"
node -e 'for (const p of ["openai","ai","@ai-sdk/openai","@ai-sdk/anthropic","@aws-sdk/client-bedrock-runtime"]) console.log(p, require("./node_modules/"+p+"/package.json").version)'
