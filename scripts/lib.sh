# shellcheck shell=bash
# lib.sh: what the bench-*.sh scripts share. Source it with the script's
# name set in NAME; it checks the checkout and FUSE and sets ROOT, the
# repository root (the working directory is left alone).

die() {
	echo "$NAME: $*" >&2
	exit 1
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$ROOT/go.mod" ] && grep -q '^module github.com/mnemofs/mnemofs' "$ROOT/go.mod" || die "not in a mnemofs checkout"
command -v go >/dev/null || die "go is not installed"
[ -e /dev/fuse ] || die "FUSE is not available (/dev/fuse is missing): load it with 'modprobe fuse', or in a container run with --device /dev/fuse"
if [ "$(id -u)" != 0 ]; then
	command -v fusermount3 >/dev/null || die "mounting as a non-root user needs fusermount3: install fuse3 (e.g. 'sudo apt-get install fuse3')"
fi

# is_root: the page cache can be dropped (cold measurements).
is_root() { [ "$(id -u)" = 0 ]; }

# unmount_if_mounted MNT: clears a mount left by a killed run.
unmount_if_mounted() {
	if grep -qF " $1 fuse" /proc/mounts; then
		fusermount3 -uz "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || echo "$NAME: could not unmount $1" >&2
	fi
}

# wait_for LOG TEXT PID: wait until LOG contains TEXT (a mount is ready),
# failing when PID exits first or after 30 s.
wait_for() {
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { cat "$1" >&2; die "mount process exited before it was ready"; }
		sleep 0.1
	done
	cat "$1" >&2
	die "mount not ready after 30 s"
}

# etcd_start DIR: starts a 3-member etcd cluster on free loopback ports,
# members' data and logs under DIR (Debian's etcd-server: /usr/bin/etcd, or
# MNEMOFS_ETCD), and waits until it has a leader. Sets ETCD_PIDS (the
# members, for etcd_stop), ETCD_EPS (HOST:PORT,...) and ETCD_VERSION; a
# store on it is --backend "etcd://$ETCD_EPS/PREFIX".
ETCD_PIDS=()
etcd_start() {
	local dir=$1 etcd=${MNEMOFS_ETCD:-/usr/bin/etcd} initial= i
	local -a cp pp
	[ -x "$etcd" ] || die "no etcd at $etcd: apt-get install etcd-server (or set MNEMOFS_ETCD)"
	command -v python3 >/dev/null || die "python3 is needed to pick free ports"
	ETCD_VERSION=$("$etcd" --version | awk 'NR == 1 {print $3}') # no head: SIGPIPE under pipefail
	ETCD_EPS=
	for i in 0 1 2; do
		read -r "cp[$i]" "pp[$i]" < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
		initial+="${initial:+,}m$i=http://127.0.0.1:${pp[$i]}"
		ETCD_EPS+="${ETCD_EPS:+,}127.0.0.1:${cp[$i]}"
	done
	mkdir -p "$dir"
	for i in 0 1 2; do
		"$etcd" --name "m$i" --data-dir "$dir/etcd-m$i" \
			--listen-client-urls "http://127.0.0.1:${cp[$i]}" --advertise-client-urls "http://127.0.0.1:${cp[$i]}" \
			--listen-peer-urls "http://127.0.0.1:${pp[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${pp[$i]}" \
			--initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token bench \
			>"$dir/etcd-m$i.log" 2>&1 &
		ETCD_PIDS+=($!)
	done
	for _ in $(seq 100); do # a leader is elected
		grep -q 'elected leader\|became leader' "$dir"/etcd-m*.log 2>/dev/null && return 0
		sleep 0.1
	done
	die "the etcd cluster in $dir has no leader after 10 s"
}

# etcd_stop: stops the members etcd_start started (only those).
etcd_stop() {
	local p
	for p in "${ETCD_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${ETCD_PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	ETCD_PIDS=()
}
