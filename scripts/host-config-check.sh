#!/usr/bin/env bash
# What `memcc setup` writes, read by what the hosts publish: Claude Code's settings.json
# type-checked against the SchemaStore schema's published types (npm
# @schemastore/claude-code-settings, with TypeScript), and Codex's hooks.json and config.toml read
# by Codex itself (npm @openai/codex: `codex mcp list --json` and the app server's hooks/list,
# which must list MemCC's server and hooks with no warning). Configs that already hold other hooks
# and servers go in; they must come out beside MemCC's, and `--uninstall` must give them back.
# Everything from npm is cached under ~/.cache/memcc/host-config.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
. scripts/lib.sh
NODE_BIN=$(node24_bin)
export PATH="$NODE_BIN:$PATH"
CACHE="$HOME/.cache/memcc/host-config"
npm_cached "$CACHE" typescript 5.9.3
npm_cached "$CACHE" @schemastore/claude-code-settings 1.0.12
npm_cached "$CACHE" @schemastore/codex-hooks 1.0.2
npm_cached "$CACHE" @openai/codex 0.171.0
BIN=$(memcc_bin)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home" MEMCC_HOME="$WORK/memcc"
mkdir -p "$HOME/.claude" "$HOME/.codex"
fail() { echo "FAIL: $*" >&2; exit 1; }

# What a user already has.
cat >"$HOME/.claude/settings.json" <<'EOF'
{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}]}}
EOF
printf '{"numStartups": 3, "mcpServers": {"other": {"type": "stdio", "command": "other-server", "args": []}}}\n' >"$HOME/.claude.json"
printf 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other-server"\n' >"$HOME/.codex/config.toml"
cat >"$HOME/.codex/hooks.json" <<'EOF'
{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]}}
EOF
cp -r "$HOME/.claude" "$WORK/claude-before"; cp "$HOME/.claude.json" "$WORK/claude.json-before"
cp -r "$HOME/.codex" "$WORK/codex-before"

"$BIN" setup claude-code >/dev/null
"$BIN" setup codex >/dev/null

# Claude Code: the settings, as TypeScript checks them against the published types.
cp -r "$CACHE/node_modules" "$WORK/node_modules"
{
  echo 'import type { ClaudeCodeSettings } from "@schemastore/claude-code-settings";'
  echo 'import type { CodexHooksConfiguration } from "@schemastore/codex-hooks";'
  printf 'export const claude = %s satisfies ClaudeCodeSettings;\n' "$(cat "$HOME/.claude/settings.json")"
  printf 'export const codex = %s satisfies CodexHooksConfiguration;\n' "$(cat "$HOME/.codex/hooks.json")"
} >"$WORK/check.ts"
(cd "$WORK" && node node_modules/typescript/bin/tsc --strict --noEmit --module nodenext --moduleResolution nodenext \
  --skipLibCheck false check.ts) || fail "the settings memcc setup wrote do not type-check against the hosts' published types"
grep -q '"guard.sh"' "$HOME/.claude/settings.json" || fail "the user's own Claude Code hook is gone"

# Codex: its own reading of config.toml and hooks.json.
CODEX="$CACHE/node_modules/.bin/codex"
export CODEX_HOME="$HOME/.codex"
"$CODEX" mcp list --json 2>/dev/null >"$WORK/mcp.json"
node -e '
  const l = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const m = l.find((s) => s.name === "memcc"), o = l.find((s) => s.name === "other");
  if (!m || !o || m.transport.command !== process.argv[2] || !m.transport.args.includes("mcp")) {
    console.error(JSON.stringify(l, null, 1)); process.exit(1);
  }' "$WORK/mcp.json" "$(readlink -f "$BIN")" || fail "Codex does not list MemCC's MCP server beside the user's"
# The app server's hooks/list: every hook Codex found, with its warnings and errors.
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"memcc-check","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"initialized"}'
  echo "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"hooks/list\",\"params\":{\"cwds\":[\"$WORK\"]}}"
  sleep 8
} | timeout 30 "$CODEX" app-server 2>/dev/null >"$WORK/hooks.jsonl" || true
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
  const r = lines.find((l) => l.id === 2);
  if (!r || !r.result) { console.error(lines); process.exit(1); }
  const d = r.result.data[0];
  const ours = d.hooks.filter((h) => / hook [A-Za-z]+$/.test(h.command));
  const events = ours.map((h) => h.eventName).sort().join(",");
  const problems = [...d.warnings, ...d.errors];
  if (events !== "preCompact,sessionEnd,sessionStart,stop,userPromptSubmit" || problems.length
      || !d.hooks.some((h) => h.command === "notify-send done") || ours.some((h) => !h.timeoutSec)) {
    console.error(JSON.stringify(d, null, 1)); process.exit(1);
  }' "$WORK/hooks.jsonl" || fail "Codex does not read MemCC's hooks as written, or warns about them"

# Uninstall gives the user their own back.
"$BIN" setup claude-code --uninstall >/dev/null
"$BIN" setup codex --uninstall >/dev/null
node -e '
  const fs = require("fs"), same = (a, b) => JSON.stringify(JSON.parse(fs.readFileSync(a))) === JSON.stringify(JSON.parse(fs.readFileSync(b)));
  const norm = (f) => { const v = JSON.parse(fs.readFileSync(f)); return JSON.stringify(v, Object.keys(v).sort()); };
  const pairs = [[process.argv[1] + "/home/.claude/settings.json", process.argv[1] + "/claude-before/settings.json"],
                 [process.argv[1] + "/home/.codex/hooks.json", process.argv[1] + "/codex-before/hooks.json"]];
  for (const [a, b] of pairs) {
    const x = JSON.parse(fs.readFileSync(a)), y = JSON.parse(fs.readFileSync(b));
    const sort = (v) => Array.isArray(v) ? v.map(sort) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v;
    if (JSON.stringify(sort(x)) !== JSON.stringify(sort(y))) { console.error(a, JSON.stringify(x), JSON.stringify(y)); process.exit(1); }
  }
  const c = JSON.parse(fs.readFileSync(process.argv[1] + "/home/.claude.json"));
  if (c.mcpServers.memcc || !c.mcpServers.other || c.numStartups !== 3) { console.error(c); process.exit(1); }' "$WORK" \
  || fail "--uninstall did not give the user's configuration back"
grep -q 'memcc' "$HOME/.codex/config.toml" && fail "--uninstall left MemCC in config.toml"
grep -q 'mcp_servers.other' "$HOME/.codex/config.toml" || fail "--uninstall took the user's own server from config.toml"
echo "host configs: Claude Code's settings type-check against the published types; Codex reads MemCC's server and 5 hooks without a warning; uninstall restores both"
