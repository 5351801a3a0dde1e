#!/usr/bin/env bash
# demo.sh: build agent, install the hello-extended example skill from this
# repository's git history into a throwaway AGENT_HOME, and use it.
#
#   examples/demo.sh [source]
#
# source defaults to this repository's root. The registry clones the
# committed state (through go-git), so uncommitted changes are not seen;
# pass the path or URL of another clone to demo that instead.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source="${1:-$root}"
agent="$root/bin/agent"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "build ./bin/agent"
(cd "$root" && make -s build)

AGENT_HOME="$(mktemp -d "${TMPDIR:-/tmp}/agent-demo.XXXXXX")"
export AGENT_HOME
trap 'rm -rf "$AGENT_HOME"' EXIT
unset AGENT_SKILLS
echo "AGENT_HOME=$AGENT_HOME"

# go-git opens a repository's .git folder, not the .git file of a git
# worktree: add from a real clone then.
if [ -f "$source/.git" ]; then
  git clone -q "$source" "$AGENT_HOME/src"
  source="$AGENT_HOME/src"
fi

step "agent skill add $source --list   (what the repository holds)"
"$agent" skill add "$source" --list

# By name: discovery finds examples/skills/hello-extended (SPEC §6).
step "agent skill add $source hello-extended --trust"
"$agent" skill add "$source" hello-extended --trust

step "agent skill list"
"$agent" skill list

step "agent skill info hello-extended"
"$agent" skill info hello-extended

step "AGENT_SKILLS=hello-extended agent tools"
export AGENT_SKILLS=hello-extended
"$agent" tools

step "agent call greet_in_language '{\"name\":\"Ada\",\"language\":\"fr\"}'"
"$agent" call greet_in_language '{"name":"Ada","language":"fr"}'

args='{"skill_name":"hello-extended","script_name":"advanced_greeting","args":["Ada","Grace","--language","es","--time-of-day","evening"]}'
step "agent call script_run '$args'"
"$agent" call script_run "$args"

step "agent skill verify hello-extended   (every installed file against its h1: hash)"
"$agent" skill verify hello-extended

step "agent skill test hello-extended   (its tests/*.yaml, validate --strict, go test, the audit)"
"$agent" skill test hello-extended

# MCP: a client nobody here wrote (the MCP inspector's CLI, pinned in
# cmd/agent/internal/mcp/testdata/inspector) starts `agent mcp` over stdio.
inspector_dir="$root/cmd/agent/internal/mcp/testdata/inspector"
inspector="$inspector_dir/node_modules/.bin/mcp-inspector"
if [ ! -x "$inspector" ] && command -v npm >/dev/null; then
  (cd "$inspector_dir" && npm ci --silent --no-audit --no-fund >/dev/null 2>&1) || true
fi
if [ -x "$inspector" ]; then
  step "agent mcp config claude-code   (the snippet an MCP client needs)"
  "$agent" mcp config claude-code
  step "mcp-inspector --cli agent mcp --method tools/list   (tool names)"
  "$inspector" --cli -e AGENT_HOME="$AGENT_HOME" -e AGENT_SKILLS="$AGENT_SKILLS" "$agent" mcp --method tools/list | python3 -c 'import json,sys; print("\n".join(t["name"] for t in json.load(sys.stdin)["tools"]))'
  step "mcp-inspector --cli agent mcp --method tools/call --tool-name greet_in_language"
  "$inspector" --cli -e AGENT_HOME="$AGENT_HOME" -e AGENT_SKILLS="$AGENT_SKILLS" "$agent" mcp --method tools/call --tool-name greet_in_language --tool-arg name=Ada --tool-arg language=de
else
  step "MCP step skipped: node/npm are not installed (apt-get install nodejs npm)"
fi

# agent run needs a model. The demo drives it with a SCRIPTED model server on
# loopback (examples/fakemodel), which answers with fixed replies in the
# OpenAI wire format: it shows the loop, not a model's judgement.
step "agent run, driven by a SCRIPTED model server on loopback (fixed replies, not a real model)"
demo_tmp="$(mktemp -d "${TMPDIR:-/tmp}/agent-demo-run.XXXXXX")"
(cd "$root" && go build -o "$demo_tmp/fakemodel" ./examples/fakemodel)
cat > "$demo_tmp/script.json" <<'JSON'
[
  {"text": "[scripted] First I load the hello-extended skill.",
   "tool_calls": [{"name": "use_skill", "args": "{\"skill\": \"hello-extended\"}"}]},
  {"text": "[scripted] Now a greeting through the plugin tool.",
   "tool_calls": [{"name": "greet_in_language", "args": "{\"name\": \"Ada\", \"language\": \"fr\"}"}]},
  {"text": "[scripted] And one through the skill's script.",
   "tool_calls": [{"name": "script_run", "args": "{\"skill_name\": \"hello-extended\", \"script_name\": \"advanced_greeting\", \"args\": [\"Ada\", \"--language\", \"es\"]}"}]},
  {"tool_calls": [{"name": "attempt_completion", "args": "{}"}]},
  {"text": "[scripted] Greeted Ada in French (Bonjour, Ada!) and in Spanish."}
]
JSON
"$demo_tmp/fakemodel" "$demo_tmp/script.json" > "$demo_tmp/url" &
fake_pid=$!
trap 'kill "$fake_pid" 2>/dev/null || true; rm -rf "$AGENT_HOME" "$demo_tmp"' EXIT
for _ in $(seq 50); do [ -s "$demo_tmp/url" ] && break; sleep 0.1; done
url="$(head -n1 "$demo_tmp/url")"
echo "scripted model server: $url (OpenAI Chat Completions wire format)"
mkdir -p "$demo_tmp/work"
(cd "$demo_tmp/work" && OTEL_TRACES_EXPORTER=file OPENAI_API_KEY=scripted OPENAI_BASE_URL="$url/v1" \
  "$agent" run --model openai/scripted --events=none "Greet Ada in French and in Spanish")
echo "state on disk: $(cd "$demo_tmp/work" && ls .agent/jobs/*/runs/*/ | grep -c '^checkpoint-') checkpoints, $(cd "$demo_tmp/work" && ls .agent/jobs/*/runs/*/ | grep -c '^event-') events under .agent/jobs"
kill "$fake_pid" 2>/dev/null || true

# The run above had OTEL_TRACES_EXPORTER=file: its spans are under
# $AGENT_HOME/traces, and agent trace draws where the time went.
step "agent trace --last 1   (the run above, traced with OTEL_TRACES_EXPORTER=file)"
"$agent" trace --last 1

step "done"
