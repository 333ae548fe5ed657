#!/usr/bin/env bash
# reads.sh: the server's peak memory while it serves a 1 GiB folder-skill
# file (a sparse file: no disk space). It starts `loadout serve` on
# loopback and sends, through the real transports:
#   - four 100-byte ranged reads over HTTP (read_skill_file, raw=1)
#   - four 100-byte ranged reads over MCP streamable HTTP (read_skill_file)
#   - the whole-file reads that must be refused (413) before reading:
#     the agent read without a range, the admin file route, the well-known
#     file route (with and without Range), JSON and zip export
# then prints each status and the server's peak RSS (VmHWM from /proc).
#
#   bench/reads.sh            # exits 1 if a status is wrong or peak RSS > MAX_MB
#   MAX_MB=150 bench/reads.sh
#
# Before reads went through skill.Skill.Open, every read loaded the whole
# file: this script's sequence peaked at 1,049 MB, and the well-known route
# served the 1 GiB file whole (the issue measured 3.6 GB with reads at once).
# After: 22 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_MB=${MAX_MB:-100}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/loadout" ./cmd/loadout
mkdir -p "$work/skills/huge"
printf -- '---\nname: huge\ndescription: A skill with a 1 GiB file.\n---\nRead data.bin in ranges.\n' > "$work/skills/huge/SKILL.md"
truncate -s 1G "$work/skills/huge/data.bin"
printf '{"agents":[{"agentId":"bench","skills":[{"root":"%s"}]}],"store":"%s"}\n' "$work/skills" "$work/bench.db" > "$work/cfg.json"
port=$((19000 + RANDOM % 1000))
base="http://127.0.0.1:$port"
"$work/loadout" serve --config "$work/cfg.json" --addr "127.0.0.1:$port" --no-watch >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "$base/healthz" >/dev/null

bad=0
expect() { # expect STATUS LABEL CURL-ARGS...
  local want=$1 label=$2; shift 2
  local got
  got=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 30 "$@")
  printf '  %-48s %s\n' "$label" "$got"
  if [ "$got" != "$want" ]; then echo "    want $want"; bad=1; fi
}

echo "ranged reads of a 1 GiB file:"
for off in 0 1048576 536870912 1073741724; do
  expect 206 "HTTP raw offset=$off length=100" "$base/v1/agents/bench/skills/huge/files/data.bin?raw=1&offset=$off&length=100"
done
hdrs="$work/mcp.h"
curl -sS -D "$hdrs" -o /dev/null --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"reads.sh","version":"1"}}}' "$base/agents/bench/mcp"
sid=$(awk 'tolower($1)=="mcp-session-id:" {print $2}' "$hdrs" | tr -d '\r')
mcp=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-06-18')
curl -sS -o /dev/null --max-time 30 "${mcp[@]}" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$base/agents/bench/mcp"
for off in 0 1048576 536870912 1073741724; do
  out=$(curl -sS --max-time 30 "${mcp[@]}" -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read_skill_file\",\"arguments\":{\"name\":\"huge\",\"path\":\"data.bin\",\"offset\":$off,\"length\":100}}}" "$base/agents/bench/mcp")
  if echo "$out" | grep -q '"blob"'; then r=ok; else r="not a blob: ${out:0:200}"; bad=1; fi
  printf '  %-48s %s\n' "MCP read_skill_file offset=$off length=100" "$r"
done
echo "whole reads, refused before reading:"
expect 413 "HTTP read_skill_file without a range" "$base/v1/agents/bench/skills/huge/files/data.bin?raw=1"
expect 413 "admin GET /v1/skills/huge/files/data.bin" "$base/v1/skills/huge/files/data.bin"
expect 413 "well-known file" "$base/.well-known/agent-skills/huge/data.bin"
expect 413 "well-known file, Range: bytes=0-99" -H 'Range: bytes=0-99' "$base/.well-known/agent-skills/huge/data.bin"
expect 413 "export json" "$base/v1/skills/huge/export"
expect 413 "export zip" "$base/v1/skills/huge/export?format=zip"
expect 200 "well-known index (huge left out, too-large)" "$base/.well-known/agent-skills/index.json"

hwm=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$pid/status")
echo "server peak RSS: ${hwm} MB (limit ${MAX_MB} MB)"
kill -INT "$pid"; wait "$pid" || true
if [ "$hwm" -gt "$MAX_MB" ]; then bad=1; fi
exit $bad
