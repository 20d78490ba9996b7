#!/usr/bin/env bash
# A Python environment with the official MCP client (PyPI `mcp`), for the MCP end-to-end test
# (crates/memcc-cli/tests/mcp.rs). Made once under ~/.cache/memcc/mcp-venv; prints its python.
set -euo pipefail
VENV="${MEMCC_MCP_VENV:-$HOME/.cache/memcc/mcp-venv}"
MCP_VERSION=2.3.0
if ! "$VENV/bin/python" -c "import mcp" >/dev/null 2>&1; then
  PY=$(command -v python3 || command -v python) || { echo "python3 is needed for the MCP client test" >&2; exit 1; }
  "$PY" -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" >&2
fi
echo "$VENV/bin/python"
