#!/usr/bin/env bash
# bench-mcp.sh: the MCP server against the mount, on one store of 10k
# memories imported with `mnemofs import`: p50/p95 of view, create,
# str_replace and search over MCP stdio (the SDK's client; the server
# going through the running mount, then holding the store itself), side
# by side in the same run with the same operations through the mount as
# system calls and as shell tools (cat, tee, sed -i, ls search/<q>/). The
# work is done by scripts/mcpbench (see its header); this script builds it
# and mnemofs, gives it a scratch area on disk, and cleans up (mount,
# scratch) on exit. About two minutes on 2 cores.
#
#   bash scripts/bench-mcp.sh                  # from the repo root
#   N=2000 OPS=100 bash scripts/bench-mcp.sh   # quick
#
# Environment: N (10000 memories), OPS (300 of each operation a side),
# SCRATCH_PARENT (/var/tmp), OUT (scripts/out), KEEP=1 keeps the scratch.
set -euo pipefail

NAME=bench-mcp
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

N=${N:-10000}
OPS=${OPS:-300}
OUT=${OUT:-scripts/out}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-mcp.XXXXXX")

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	# mcpbench stops its mount; this covers it being killed.
	if [ -s "$SCRATCH/mount.pid" ]; then
		p=$(cat "$SCRATCH/mount.pid")
		kill -TERM "$p" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	fi
	unmount_if_mounted "$SCRATCH/mnt"
	if [ "${KEEP:-0}" = 1 ]; then
		echo "bench-mcp: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$OUT"
go build -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
go build -o "$SCRATCH/bin/mcpbench" ./scripts/mcpbench

fstype=$(df -T "$SCRATCH" | awk 'NR==2 {print $2}')
[ "$fstype" = tmpfs ] && echo "bench-mcp: warning: $SCRATCH is on tmpfs, not a disk; set SCRATCH_PARENT" >&2
stamp=$(date +%Y%m%d-%H%M%S)
res=$OUT/bench-mcp-$stamp.md
{
	echo "## bench-mcp $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, kernel $(uname -r), scratch on $fstype, load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Command: N=$N OPS=$OPS bash scripts/bench-mcp.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	echo
	"$SCRATCH/bin/mcpbench" -bin "$SCRATCH/bin/mnemofs" -work "$SCRATCH" -n "$N" -ops "$OPS"
} | tee "$res"
echo "bench-mcp: results in $res" >&2
