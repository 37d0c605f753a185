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
