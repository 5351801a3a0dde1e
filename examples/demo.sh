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
(cd "$root" && go build -o bin/agent ./cmd/agent)

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

# The example sits outside the usual skill folders, so name its path.
step "agent skill add $source examples/skills/hello-extended --trust"
"$agent" skill add "$source" examples/skills/hello-extended --trust

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

step "done"
