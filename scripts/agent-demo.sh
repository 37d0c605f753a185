#!/usr/bin/env bash
# agent-demo.sh: does what an LLM agent does with its memory, using plain
# tools only (bash, ls, cat, grep -r, find, echo >>, mv, rm, touch, printf;
# stat and cmp to compare), against the real mnemofs binary on a real FUSE
# mount of a fresh store, and checks every result:
#   - writes memories with front matter (users alice and bob, types, tags,
#     created dates; Markdown, JSON and an appended JSONL log) into
#     episodic/, semantic/ and working/, and reads them back;
#   - ls, cat, find and grep -r over by-user/alice, by-type, by-tag,
#     by-date/YYYY/MM/DD and recent: the right files, with the same bytes,
#     inode and size as the real files;
#   - search/<query>/ (ls and .results) with the filters user: type: tag:
#     path: after: before: k:, a search scoped to by-user/alice (no bob
#     memory) and to by-tag/travel, a Chinese query, a query with %2F, and
#     hostile queries (..%2F..) that must not name anything outside the store;
#   - EROFS ("Read-only file system") for create, mkdir, rename and remove
#     inside views and search results, with the real tree left unchanged;
#   - a file just written, appended, rewritten, renamed or removed is seen
#     by search and the views at once;
#   - context/<query> holds the relevant memories and the working memory;
#   - `mnemofs search` and `mnemofs unmount` against the running mount.
# Each check prints one line, "ok - ..." or "FAIL - ...", then a summary;
# the exit status is non-zero if any check failed (a check marked with
# `known` before it prints FAIL but is not counted: see the one mark in the
# context/ section). The mount is always stopped and the scratch area
# removed on exit, error or Ctrl-C, and the script checks that it leaves no
# mount behind. About 5 seconds, plus the build.
#
#   bash scripts/agent-demo.sh                                # from anywhere
#   MNEMOFS_BIN=/path/to/mnemofs bash scripts/agent-demo.sh   # no build
#
# Environment: MNEMOFS_BIN (a built binary; default: go build into the
# scratch area), SCRATCH_PARENT (/var/tmp), KEEP=1 keeps the scratch area
# (data dir, mount log, copies of the memories). CI runs it from
# tests/e2e/agentdemo_test.go (go test -run AgentDemo ./tests/e2e/).
set -uo pipefail
export LC_ALL=C # byte order for ls and sort, byte matching for grep

NAME=agent-demo
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || die "cannot cd to $ROOT"

SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
SCRATCH=$(mktemp -d "$SCRATCH_PARENT/mnemofs-agent-demo.XXXXXX") || die "cannot make a scratch directory in $SCRATCH_PARENT"
DATA=$SCRATCH/data MNT=$SCRATCH/mnt SRC=$SCRATCH/src
MOUNT_PID=
PASSED=0 FAILED=0

# stop_mount: SIGTERM to a mount still running (it unmounts cleanly), then
# SIGKILL and a lazy unmount as a last resort.
stop_mount() {
	if [ -n "$MOUNT_PID" ] && kill -0 "$MOUNT_PID" 2>/dev/null; then
		kill -TERM "$MOUNT_PID" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$MOUNT_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$MOUNT_PID" 2>/dev/null
		wait "$MOUNT_PID" 2>/dev/null
	fi
	MOUNT_PID=
	unmount_if_mounted "$MNT"
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	cd / || true
	stop_mount
	if grep -qF " $MNT " /proc/mounts; then
		# Never rm -rf through a live mount: that would remove memories.
		echo "$NAME: $MNT is still mounted; left $SCRATCH in place" >&2
		rc=1
	elif [ "${KEEP:-0}" = 1 ]; then
		echo "$NAME: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- checks -----------------------------------------------------------------

# Every check ends in ok or fail, which print its one line. known REASON
# before a check marks it a known failure: still printed as FAIL, but it
# does not fail the run (and says so when it passes again).
KNOWN= NKNOWN=0
known() { KNOWN=$1; }
ok() {
	PASSED=$((PASSED + 1))
	echo "ok - $*${KNOWN:+ (was marked a known failure: $KNOWN; drop the mark)}"
	KNOWN=
}
fail() {
	if [ -n "$KNOWN" ]; then
		NKNOWN=$((NKNOWN + 1))
		echo "FAIL - $* (known failure, not counted: $KNOWN)"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL - $*"
	fi
	KNOWN=
}
# oneline TEXT: TEXT with its newlines shown as " | ".
oneline() { printf %s "$1" | head -c 800 | sed ':a;N;$!ba;s/\n/ | /g'; }
# expect DESC GOT WANT
expect() {
	if [ "$2" = "$3" ]; then ok "$1: $(oneline "$2")"; else fail "$1: got [$(oneline "$2")], want [$(oneline "$3")]"; fi
}
# holds DESC CMD...: CMD succeeds.
holds() {
	local d=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$d"; else fail "$d (false: $*)"; fi
}
# contains DESC TEXT WORD...: TEXT contains every WORD.
contains() {
	local d=$1 text=$2 w miss=
	shift 2
	for w in "$@"; do [[ $text == *"$w"* ]] || miss+=" [$w]"; done
	if [ -z "$miss" ]; then ok "$d"; else fail "$d: missing$miss in: $(oneline "$text")"; fi
}
# lacks DESC TEXT WORD...: TEXT contains no WORD.
lacks() {
	local d=$1 text=$2 w bad=
	shift 2
	for w in "$@"; do [[ $text == *"$w"* ]] && bad+=" [$w]"; done
	if [ -z "$bad" ]; then ok "$d"; else fail "$d: found$bad in: $(oneline "$text")"; fi
}
# erofs DESC CMD...: CMD fails with "Read-only file system".
erofs() {
	local d=$1 out
	shift
	if out=$("$@" 2>&1); then
		fail "$d: succeeded, want EROFS"
	elif [[ $out == *"Read-only file system"* ]]; then
		ok "$d: Read-only file system"
	else
		fail "$d: failed with [$out], want \"Read-only file system\""
	fi
}

words() { LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'; }
# files VIEW: the regular files under VIEW (a view root), relative to it,
# sorted; the view's own search/ directory is left out.
files() { (cd "$1" && find . -path ./search -prune -o -type f -print) | sed 's|^\./||' | words; }
# mirrors VIEW: every file under VIEW has the bytes, inode and size of the
# real file at the same relative path.
mirrors() {
	local v=$1 f n=0 bad=
	for f in $(files "$v"); do
		n=$((n + 1))
		if ! cmp -s "$v/$f" "$f"; then
			bad+=" $f(bytes)"
		elif [ "$(stat -c %i:%s "$v/$f")" != "$(stat -c %i:%s "$f")" ]; then
			bad+=" $f(inode/size $(stat -c %i:%s "$v/$f") vs $(stat -c %i:%s "$f"))"
		fi
	done
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		ok "$v: cat gives the same bytes, stat the same inode and size as the real file, for all $n files"
	else
		fail "$v: $n files, differing from the real file:${bad:- (none found)}"
	fi
}
# hits DIR: the canonical paths in DIR/.results, rank order, one a line.
hits() { cat "$1/.results" | { grep -v '^#' || true; } | cut -f3 | sed 's|^/||'; }
# search_is DESC DIR WANT: the search directory DIR returns exactly the
# memories WANT (real paths, space-separated, any order; "" for none), lists
# exactly .results and NN-<name> for them, and each NN-<name> has the bytes
# of its memory.
search_is() {
	local d=$1 dir=$2 want=$3 res got rows nn p f want_ls=".results" bad=
	if ! res=$(cat "$dir/.results" 2>&1); then
		fail "$d: cat '$dir/.results': $res"
		return
	fi
	rows=$(printf '%s\n' "$res" | grep -v '^#' | cut -f1,3)
	got=$(printf '%s\n' "$rows" | cut -f2 | sed '/^$/d; s|^/||' | words)
	while IFS=$'\t' read -r nn p; do
		[ -n "$nn" ] || continue
		p=${p#/}
		f=${p%:[0-9]*} # a JSONL line: path:line
		if [ "$f" != "$p" ]; then
			# A log's line: its entry is <nn>-<log>#L<line>, a file holding
			# that line (marked ':') and its neighbours.
			local n=${p##*:} e
			e="$nn-$(basename "$f")#L$n"
			want_ls+=" $e"
			grep -qxF "$n:$(sed -n "${n}p" "$f")" "$dir/$e" || bad+=" $e"
			continue
		fi
		want_ls+=" $nn-$(basename "$f")"
		cmp -s "$dir/$nn-$(basename "$f")" "$f" || bad+=" $nn-$(basename "$f")"
	done <<<"$rows"
	local ls_got
	ls_got=$(ls -A "$dir" 2>&1 | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" != "$want" ]; then
		fail "$d: '$dir/.results' lists [$got], want [$want]"
	elif [ "$ls_got" != "$want_ls" ]; then
		fail "$d: ls '$dir' gives [$ls_got], want [$want_ls]"
	elif [ -n "$bad" ]; then
		fail "$d: entries without their memory's bytes:$bad"
	else
		ok "$d: ls '$dir/' = $ls_got"
	fi
}
# only_dot_results DIR DESC: the search DIR names nothing (only .results).
only_dot_results() {
	local out
	out=$(ls -A "$1" 2>&1 | tr '\n' ' ' | sed 's/ $//')
	expect "$2" "$out" ".results"
}

# remember REL: stdin is a memory; keep a copy in $SRC and write it with cat.
remember() {
	mkdir -p "$(dirname "$SRC/$1")" "$(dirname "$1")" && cat >"$SRC/$1" && cat "$SRC/$1" >"$1"
}
# outside: what is next to the store in the scratch area (not the data
# dir, the mountpoint, the copies or the growing mount log).
outside() { find "$SCRATCH" -mindepth 1 \( -path "$DATA" -o -path "$MNT" -o -path "$SRC" \) -prune -o ! -name mount.log -printf '%P %s %T@\n' | sort; }

# --- build and mount --------------------------------------------------------

START=$SECONDS
BIN=${MNEMOFS_BIN:-}
if [ -z "$BIN" ]; then
	BIN=$SCRATCH/mnemofs
	go build -o "$BIN" ./cmd/mnemofs || die "go build failed"
fi
[ -x "$BIN" ] || die "MNEMOFS_BIN=$BIN is not an executable"
mkdir -p "$MNT" "$SRC" || die "cannot make $MNT"
# Something outside the store that no path or query may reach.
echo "wombatsecret: this file is outside the store" >"$SCRATCH/outside.txt"

"$BIN" mount --data "$DATA" "$MNT" >"$SCRATCH/mount.log" 2>&1 &
MOUNT_PID=$!
for _ in $(seq 300); do
	grep -q '^mnemofs: mounted' "$SCRATCH/mount.log" && break
	kill -0 "$MOUNT_PID" 2>/dev/null || break
	sleep 0.1
done
grep -q '^mnemofs: mounted' "$SCRATCH/mount.log" || die "mount not ready: $(cat "$SCRATCH/mount.log")"
holds "mount printed its ready line and $MNT is in /proc/mounts" grep -qF " $MNT fuse" /proc/mounts
OUTSIDE=$(outside)
cd "$MNT" || die "cannot cd to $MNT"
expect "a fresh store: ls (the guide; the generated trees open by name)" "$(ls | words)" "MNEMOFS.md archive episodic semantic working"

# --- the agent writes memories ----------------------------------------------

TODAY=$(date -u +%Y/%m/%d) # created defaults to now; by-date uses UTC
T_WRITE=$SECONDS
remember semantic/alice/food.md <<'EOF'
---
user: alice
type: preference
tags: [food, diet]
created: 2024-05-01
---
Alice is vegetarian and loves ramen noodles.
EOF
remember semantic/bob/food.md <<'EOF'
---
user: bob
tags: [food]
created: 2024-05-20
---
Bob eats steak and ramen every Friday.
EOF
remember semantic/bob/profile.json <<'EOF'
{"user": "bob", "type": "profile", "tags": ["sport"], "created": "2024-04-20", "note": "Bob plays tennis on Sundays."}
EOF
remember semantic/zh/note.md <<'EOF'
---
user: alice
tags: [food]
created: 2024-05-03
---
我喜欢吃拉面和寿司。
EOF
remember semantic/paths/config.md <<'EOF'
---
user: bob
type: config
created: 2024-07-01
---
The build output path a/b/c is configured in settings.
EOF
remember episodic/s1/turn1.md <<'EOF'
---
user: alice
tags: [travel]
created: 2024-06-10
---
We talked about hiking in the Alps.
EOF
remember episodic/s1/turn2.md <<'EOF'
---
user: alice
type: chat
tags: [travel]
created: 2024-06-10
---
She plans a trip to Zermatt next summer.
EOF
remember episodic/s2/turn1.md <<'EOF'
---
user: bob
tags: [travel, sport]
created: 2024-06-12
---
Bob went kayaking on Lake Geneva.
EOF
remember working/plan.md <<'EOF'
---
user: alice
tags: [travel]
---
TODO: book the train to Zermatt.
EOF
remember working/bob-todo.md <<'EOF'
---
user: bob
---
TODO: buy a new paddle for the kayak.
EOF
mkdir -p episodic/log "$SRC/episodic/log"
for line in '{"event": "login"}' '{"event": "bought a canoe"}'; do
	echo "$line" >>episodic/log/events.jsonl
	echo "$line" >>"$SRC/episodic/log/events.jsonl"
done

ALL=$( (cd "$SRC" && find . -type f) | sed 's|^\./||' | words)
ALICE="episodic/s1/turn1.md episodic/s1/turn2.md semantic/alice/food.md semantic/zh/note.md working/plan.md"
BOB="episodic/s2/turn1.md semantic/bob/food.md semantic/bob/profile.json semantic/paths/config.md working/bob-todo.md"
bad=
for f in $ALL; do cmp -s "$SRC/$f" "$f" || bad+=" $f"; done
if [ -z "$bad" ]; then ok "wrote $(echo "$ALL" | wc -w) memories (cat >, echo >>); cat gives back the bytes written"; else fail "cat differs from what was written:$bad"; fi
expect "find episodic semantic working -type f" "$(find episodic semantic working -type f | words)" "$ALL"
expect "grep -rl ramen episodic semantic working" "$(grep -rl ramen episodic semantic working | words)" "semantic/alice/food.md semantic/bob/food.md"
expect "grep -rl ramen . (each memory once)" "$(grep -rl ramen . | sed 's|^\./||' | words)" "semantic/alice/food.md semantic/bob/food.md"
expect "find . -type f (each memory once, and the guide)" "$(find . -type f | sed 's|^\./||' | words)" "$(printf '%s\n' $ALL MNEMOFS.md | words)"
index=$(cat meta/index.json)
contains "meta/index.json lists every memory" "$index" $ALL

# --- views: ls, cat, find, grep -r ------------------------------------------

expect "ls by-user" "$(ls by-user | words)" "alice bob"
expect "find by-user/alice -type f (pruning its search/)" "$(files by-user/alice)" "$ALICE"
expect "find by-user/bob -type f" "$(files by-user/bob)" "$BOB"
mirrors by-user/alice
mirrors by-user/bob
expect "ls by-user/alice/semantic" "$(ls by-user/alice/semantic | words)" "alice zh"
expect "grep -rl ramen by-user/alice" "$(grep -rl ramen by-user/alice | words)" "by-user/alice/semantic/alice/food.md"
expect "grep -rl 'user: bob' by-user/alice (no bob memory)" "$(grep -rl 'user: bob' by-user/alice | words)" ""
expect "grep -rl kayak by-user/bob" "$(grep -rl kayak by-user/bob | words)" "by-user/bob/episodic/s2/turn1.md by-user/bob/working/bob-todo.md"
expect "cat by-user/alice/semantic/zh/note.md" "$(cat by-user/alice/semantic/zh/note.md | tail -1)" "我喜欢吃拉面和寿司。"

expect "ls by-type" "$(ls by-type | words)" "chat config episodic preference profile semantic working"
expect "find by-type/episodic -type f" "$(files by-type/episodic)" "episodic/log/events.jsonl episodic/s1/turn1.md episodic/s2/turn1.md"
expect "find by-type/chat -type f" "$(files by-type/chat)" "episodic/s1/turn2.md"
expect "find by-type/semantic -type f" "$(files by-type/semantic)" "semantic/bob/food.md semantic/zh/note.md"
expect "find by-type/profile -type f" "$(files by-type/profile)" "semantic/bob/profile.json"
for t in episodic chat semantic profile preference config working; do mirrors "by-type/$t"; done
expect "grep -rl Zermatt by-type/working" "$(grep -rl Zermatt by-type/working | words)" "by-type/working/working/plan.md"

expect "ls by-tag" "$(ls by-tag | words)" "diet food sport travel"
expect "find by-tag/food -type f" "$(files by-tag/food)" "semantic/alice/food.md semantic/bob/food.md semantic/zh/note.md"
expect "find by-tag/travel -type f" "$(files by-tag/travel)" "episodic/s1/turn1.md episodic/s1/turn2.md episodic/s2/turn1.md working/plan.md"
expect "find by-tag/sport -type f" "$(files by-tag/sport)" "episodic/s2/turn1.md semantic/bob/profile.json"
for t in diet food sport travel; do mirrors "by-tag/$t"; done
expect "grep -rl Zermatt by-tag/travel" "$(grep -rl Zermatt by-tag/travel | words)" "by-tag/travel/episodic/s1/turn2.md by-tag/travel/working/plan.md"

expect "ls by-date" "$(ls by-date | words)" "$(printf '2024\n%s\n' "${TODAY%%/*}" | sort -u | words)"
expect "ls by-date/2024" "$(ls by-date/2024 | words)" "04 05 06 07"
expect "ls by-date/2024/05" "$(ls by-date/2024/05 | words)" "01 03 20"
expect "find by-date/2024/06/10 -type f" "$(files by-date/2024/06/10)" "episodic/s1/turn1.md episodic/s1/turn2.md"
expect "find by-date/2024/05/03 -type f" "$(files by-date/2024/05/03)" "semantic/zh/note.md"
expect "find by-date/$TODAY -type f (no created key: today, UTC)" "$(files "by-date/$TODAY")" "episodic/log/events.jsonl working/bob-todo.md working/plan.md"
for d in 2024/04/20 2024/05/01 2024/05/03 2024/05/20 2024/06/10 2024/06/12 2024/07/01 "$TODAY"; do mirrors "by-date/$d"; done
expect "grep -rl 拉面 by-date/2024/05" "$(grep -rl 拉面 by-date/2024/05 | words)" "by-date/2024/05/03/semantic/zh/note.md"

expect "find recent -type f (all $(echo "$ALL" | wc -w) memories, fewer than 50)" "$(files recent)" "$ALL"
mirrors recent
expect "grep -rl Zermatt recent" "$(grep -rl Zermatt recent | words)" "recent/episodic/s1/turn2.md recent/working/plan.md"

# --- search -----------------------------------------------------------------

search_is "search" "search/ramen" "semantic/alice/food.md semantic/bob/food.md"
res=$(cat search/ramen/.results)
contains "cat search/ramen/.results: header, rank, path and snippet" "$res" "# rank" $'01\t' "/semantic/bob/food.md" "Bob eats steak and ramen"
search_is "filter user:bob" "search/ramen user:bob" "semantic/bob/food.md"
search_is "filter user:alice" "search/ramen user:alice" "semantic/alice/food.md"
search_is "filter type:chat" "search/zermatt type:chat" "episodic/s1/turn2.md"
search_is "filter type:config" "search/settings type:config" "semantic/paths/config.md"
search_is "filter tag:diet" "search/ramen tag:diet" "semantic/alice/food.md"
search_is "filter tag:sport" "search/tennis tag:sport" "semantic/bob/profile.json"
search_is "filter path:working" "search/zermatt path:working" "working/plan.md"
search_is "filter after:" "search/ramen after:2024-05-10" "semantic/bob/food.md"
search_is "filter before:" "search/ramen before:2024-05-10" "semantic/alice/food.md"
search_is "filters after: before: together" "search/kayaking after:2024-06-11 before:2024-06-30" "episodic/s2/turn1.md"
expect "filter path:episodic%2Fs1 (top hit)" "$(hits 'search/hiking path:episodic%2Fs1' | head -1)" "episodic/s1/turn1.md"
expect "filter path:episodic%2Fs1 (every hit under episodic/s1/)" "$(hits 'search/hiking path:episodic%2Fs1' | grep -v '^episodic/s1/' | words)" ""
n_all=$(hits search/travel | wc -l)
holds "search/travel without k: finds the 4 travel memories (got $n_all)" test "$n_all" -ge 4
expect "filter k:2: rows in .results" "$(hits 'search/travel k:2' | wc -l)" "2"
expect "filter k:2: ls" "$(ls -A 'search/travel k:2' | wc -l)" "3"
search_is "filters user: tag: k: together" "search/travel user:bob tag:sport k:5" "episodic/s2/turn1.md"
# k:1: with WordNet installed "canoe" also finds the kayak memories (a
# kayak is a canoe), below the line that says canoe.
search_is "JSONL: one line is one document, its entry the line and its neighbours" "search/canoe k:1" "episodic/log/events.jsonl:2"
contains "JSONL: .results names path:line" "$(cat search/canoe/.results)" "/episodic/log/events.jsonl:2" "bought a canoe"

search_is "scoped by-user/alice/search" "by-user/alice/search/ramen" "semantic/alice/food.md"
search_is "scoped by-user/alice/search with user:bob (scope wins)" "by-user/alice/search/ramen user:bob" ""
for q in food travel kayak steak; do
	out=$(hits "by-user/alice/search/$q" | words)
	expect "scoped by-user/alice/search/$q returns no bob memory ([$out])" "$(for b in $out; do [[ " $BOB " == *" ${b%:[0-9]*} "* ]] && echo "$b"; done | words)" ""
	lacks "scoped by-user/alice/search/$q: no entry holds a bob memory" "$(cat "by-user/alice/search/$q"/[0-9]* 2>/dev/null)" "user: bob" '"user": "bob"'
done
search_is "scoped by-tag/travel/search" "by-tag/travel/search/kayak" "episodic/s2/turn1.md"

search_is "Chinese query" "search/拉面" "semantic/zh/note.md"
search_is "Chinese query, scoped to alice" "by-user/alice/search/拉面" "semantic/zh/note.md"
search_is "Chinese query, scoped to bob" "by-user/bob/search/拉面" ""
contains "Chinese query: .results snippet" "$(cat search/拉面/.results)" "我喜欢吃拉面"

search_is "query with %2F" "search/a%2Fb%2Fc configured" "semantic/paths/config.md"
contains "query with %2F is percent-decoded" "$(head -1 'search/a%2Fb%2Fc configured/.results')" "# query: a/b/c configured"

only_dot_results "search/..%2F.." "hostile query ..%2F..: ls -A lists only .results"
expect "hostile query ..%2F..: find -type f" "$(find 'search/..%2F..' -type f | words)" "search/..%2F../.results"
only_dot_results "search/..%2F..%2Foutside.txt" "hostile query ..%2F..%2Foutside.txt: nothing named"
only_dot_results "search/..%2F..%2F..%2F..%2Fetc%2Fpasswd" "hostile query ..%2F..%2F..%2F..%2Fetc%2Fpasswd: nothing named"
only_dot_results "search/wombatsecret" "a word only in a file next to the store: not found"
out=$(cat 'search/..%2F..%2F..%2F..%2Fetc%2Fpasswd/.results' 'search/..%2F../.results' 'context/..%2F..%2Foutside.txt' 'context/..%2F..%2F..%2F..%2Fetc%2Fpasswd' 2>&1)
lacks "hostile queries: .results and context/ show nothing from outside" "$out" "wombatsecret" "root:x:0"
out=$(ls -A 'search/wombatsecret path:..%2F..' 2>&1)
lacks "hostile path: filter ..%2F..: no entry" "$out" "01-"
holds "hostile name by-user/..%2F..: no such user" test ! -e 'by-user/..%2F..'
expect "nothing next to the store was created or changed" "$(outside | words)" "$(echo "$OUTSIDE" | words)"

# --- views are read-only for names ------------------------------------------

before=$(find episodic semantic working archive -printf '%p %s %i\n' | sort)
erofs "touch by-user/alice/semantic/new.md" touch by-user/alice/semantic/new.md
erofs "echo > by-tag/food/semantic/new.md" bash -c 'echo x > by-tag/food/semantic/new.md'
erofs "echo > recent/new.md" bash -c 'echo x > recent/new.md'
erofs "mkdir by-type/chat/episodic/d" mkdir by-type/chat/episodic/d
erofs "touch search/ramen/new" touch search/ramen/new
erofs "mv within a view" mv by-user/alice/semantic/alice/food.md by-user/alice/semantic/alice/renamed.md
erofs "mv from the real tree into a view" mv working/plan.md by-user/alice/working/plan2.md
erofs "mv out of a view into the real tree" mv by-tag/food/semantic/bob/food.md semantic/bob/moved.md
erofs "mv a search result" mv search/ramen/01-food.md search/ramen/99-food.md
erofs "rm in by-user" rm by-user/alice/semantic/alice/food.md
erofs "rm in by-date" rm by-date/2024/05/20/semantic/bob/food.md
erofs "rm in recent" rm recent/working/plan.md
erofs "rm a search result" rm search/ramen/01-food.md
erofs "rmdir in by-user" rmdir by-user/alice/semantic/zh
after=$(find episodic semantic working archive -printf '%p %s %i\n' | sort)
if [ "$after" = "$before" ]; then
	ok "the real tree is unchanged after the refused operations ($(echo "$after" | wc -l) names, sizes and inodes)"
else
	fail "the real tree changed after the refused operations: $(oneline "$(diff <(echo "$before") <(echo "$after"))")"
fi
expect "by-user/alice still lists alice's memories" "$(files by-user/alice)" "$ALICE"

# --- changes are seen at once -----------------------------------------------

printf 'Saw a platypus by the river today.\n' >working/sighting.md
search_is "a file just written and closed is found by search at once" "search/platypus" "working/sighting.md"
expect "... and is in recent/ at once" "$(files recent | tr ' ' '\n' | grep sighting)" "working/sighting.md"
echo 'Alice is allergic to peanuts.' >>semantic/alice/food.md
echo 'Alice is allergic to peanuts.' >>"$SRC/semantic/alice/food.md"
search_is "a line just appended (echo >>) is found at once" "search/peanuts" "semantic/alice/food.md"
search_is "... also in the scoped search" "by-user/alice/search/peanuts" "semantic/alice/food.md"
holds "... and by-user/alice shows the appended bytes" cmp -s by-user/alice/semantic/alice/food.md "$SRC/semantic/alice/food.md"
echo '{"event": "sold the canoe"}' >>episodic/log/events.jsonl
contains "a JSONL line just appended is found at once as path:line" "$(cat search/sold/.results)" "/episodic/log/events.jsonl:3"
printf 'Nothing to report.\n' >working/sighting.md
search_is "a rewritten file no longer matches its old words" "search/platypus" ""
mv working/bob-todo.md working/bob-done.md
search_is "a renamed file is found under its new name" "search/paddle" "working/bob-done.md"
expect "... and by-user/bob shows the new name" "$(ls by-user/bob/working | words)" "bob-done.md"
# A memory removed within 3 s of its creation counts as scratch (really deleted).
while [ $((SECONDS - T_WRITE)) -lt 4 ]; do sleep 0.5; done
rm working/bob-done.md
search_is "a removed file is gone from search" "search/paddle" ""
expect "... and from by-user/bob" "$(files by-user/bob)" "episodic/s2/turn1.md semantic/bob/food.md semantic/bob/profile.json semantic/paths/config.md"
holds "... and kept in archive/trash/working/bob-done.md" cmp -s archive/trash/working/bob-done.md "$SRC/working/bob-todo.md"

# --- context/ ---------------------------------------------------------------

ctx=$(cat 'context/zermatt trip')
contains "cat 'context/zermatt trip': the relevant memory and the working memory" "$ctx" \
	"## Relevant memories" "/episodic/s1/turn2.md" "She plans a trip to Zermatt next summer." "## Working memory" "/working/plan.md"
ctx=$(cat context/拉面)
contains "cat context/拉面: the Chinese memory" "$ctx" "/semantic/zh/note.md" "我喜欢吃拉面和寿司。"
ctx=$(cat 'context/ramen user:bob')
contains "cat 'context/ramen user:bob'" "$ctx" "Bob eats steak and ramen"
lacks "cat 'context/ramen user:bob': no alice memory among the relevant ones" "${ctx%%## Working memory*}" "Alice is vegetarian"
n=$(cat 'context/ramen budget:50' | wc -c)
holds "cat 'context/ramen budget:50' is trimmed to the budget ($n bytes, 0 < n <= 50*4+64)" test "$n" -gt 0 -a "$n" -le 264
erofs "echo > context/new" bash -c 'echo x > context/new'

# --- the CLI talks to the running mount -------------------------------------

out=$("$BIN" search --data "$DATA" --user alice ramen 2>&1)
contains "mnemofs search --user alice ramen (while mounted)" "$out" "semantic/alice/food.md"
lacks "mnemofs search --user alice ramen: no bob memory" "$out" "semantic/bob/"

# --- unmount ----------------------------------------------------------------

cd "$ROOT" || die "cannot cd to $ROOT"
out=$("$BIN" unmount "$MNT" 2>&1)
expect "mnemofs unmount $MNT: exit status ($out)" "$?" "0"
status=0
wait "$MOUNT_PID" || status=$?
MOUNT_PID=
expect "the mount process exited with status" "$status" "0"
holds "$MNT is no longer in /proc/mounts" bash -c "! grep -F '$SCRATCH' /proc/mounts"
expect "the mountpoint is empty again" "$(ls -A "$MNT" | words)" ""

echo "# $PASSED passed, $FAILED failed, $NKNOWN known failures, $((SECONDS - START)) s"
[ "$FAILED" -eq 0 ]
