#!/usr/bin/env bash
# One venv per agent framework under tests/frameworks/.venv-NAME, from requirements-NAME.txt (exact
# pins). They are separate because their pins conflict with google-adk's (langchain-mcp-adapters
# pins mcp 1.30) and with each other. Idempotent: a venv is rebuilt only when its requirements
# file changed (its copy is kept inside the venv), so the tests then run offline.
set -euo pipefail
cd "$(dirname "$0")"
for req in requirements-*.txt; do
  name=${req#requirements-}; name=${name%.txt}; venv=.venv-$name
  cmp -s "$req" "$venv/requirements.txt" 2>/dev/null && continue
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  cp "$req" "$venv/requirements.txt"
done
