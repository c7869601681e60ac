#!/usr/bin/env bash
# make demo: panto's main job, offline. Builds panto, then runs it with the
# built-in echo provider (no key, no network) in a throwaway HOME and
# project that have layered SYSTEM.md / APPEND_SYSTEM.md files, and shows
# the recorded session log, a resume after a prompt file changed, and the
# prompt as of any point of the log, and an extension (examples/plugins/
# sysprompt) growing and then wiping the prompt mid-conversation, and a
# branch taken from before the wipe, which runs under the prompt as it was
# there.
set -euo pipefail
cd "$(dirname "$0")/.."
PANTO="$PWD/bin/panto"
[ -x "$PANTO" ] || { echo "demo: $PANTO missing; run make build" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/panto-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/home/.local/share" \
       XDG_CONFIG_HOME="$tmp/home/.config" XDG_STATE_HOME="$tmp/home/.local/state"
unset PANTO_HOME ANTHROPIC_API_KEY OPENAI_API_KEY ANTHROPIC_BASE_URL OPENAI_BASE_URL
mkdir -p "$tmp/project/.panto" "$XDG_CONFIG_HOME/panto" "$XDG_DATA_HOME/panto/agent"
cd "$tmp/project"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

# The three layers: base ($PANTO_HOME/agent), user ($XDG_CONFIG_HOME/panto),
# project (./.panto). The user layer's config picks the offline provider.
echo 'provider = "echo"' > "$XDG_CONFIG_HOME/panto/config.toml"
echo "You are a careful assistant for the demo project." > .panto/SYSTEM.md
echo "Project rule: answer in one short paragraph." > .panto/APPEND_SYSTEM.md
echo "User preference: British spelling." > "$XDG_CONFIG_HOME/panto/APPEND_SYSTEM.md"
echo "Base note: the machine is offline." > "$XDG_DATA_HOME/panto/agent/APPEND_SYSTEM.md"

step "Where panto looks (base, user, project layers)"
show "$PANTO" dirs

step "The system prompt a fresh session starts with, and where each block comes from"
show "$PANTO" prompt

step "One turn with the offline echo provider (it describes what it was sent)"
show "$PANTO" -p "Hello, panto."

log=$(ls "$XDG_DATA_HOME"/panto/sessions/*/*.jsonl)
step "The session log: seed + appends, a lifecycle entry, then the turn"
show cat "$log"

step "Change a prompt file, then resume: panto records replace + appends"
echo "Project rule: answer in bullet points." > .panto/APPEND_SYSTEM.md
show "$PANTO" -c -p "What changed?"
printf '\nNew log lines:\n'
tail -n 7 "$log"

step "Resume again with the files unchanged: no new system entries"
show "$PANTO" -c -p "And now?"

step "The prompt as it was after the first 4 messages, and as it is now"
show "$PANTO" prompt -c --at 4
show "$PANTO" prompt -c

step "An extension grows the prompt mid-conversation (examples/plugins/sysprompt)"
SYSPROMPT="$(dirname "$PANTO")/sysprompt"
show "$PANTO" -c --extension "$SYSPROMPT" -p "/system-append Extension note: cite file paths."
show "$PANTO" -c --extension "$SYSPROMPT" -p "Does the next request carry it?"

step "...and wipes it: a replace-mode entry, appended like every other"
show "$PANTO" -c --extension "$SYSPROMPT" -p "/system-replace You are terse."
show "$PANTO" prompt -c
printf '\nThe log keeps every step, so the prompt just before the replace is still exact:\n'
show "$PANTO" prompt -c --at 17

step "The session tree: every branch, and who changed the prompt where (⚙)"
show "$PANTO" session tree
# The reply just before /system-replace: the last assistant row before
# the replace's ⚙ row.
before=$("$PANTO" session tree | awk '/assistant/ {id=$2} /replaced the system prompt/ {print id; exit}')

step "Branch from before the replace: the new branch runs under the prompt as it was there"
show "$PANTO" -c --from "$before" -p "Which prompt do I get on this branch?"
show "$PANTO" session tree
printf '
The main line ends terse; this branch does not — the prompt is exact at every node:
'
show "$PANTO" prompt -c
show "$PANTO" session export --format md -o "$tmp/session.md"
printf '(exported the branch as Markdown: %s lines)\n' "$(wc -l < "$tmp/session.md")"

step "Tools, offline: the echo provider calls the first-party tools extension"
show "$PANTO" --no-session --extension "$(dirname "$PANTO")/extensions/tools" \
  -p $'tool:ls {"path": ".panto"}\ntool:read {"path": ".panto/SYSTEM.md"}'

step "This directory's sessions"
show "$PANTO" session list

printf '\nDone. Use a real model: ANTHROPIC_API_KEY=... bin/panto (see README.md).\n'
