#!/usr/bin/env bash
# stress.sh: stress-ng's file system stressors against a fresh mount of the
# real binary, one stressor after another (so a failure names its
# stressor), each with --verify where it has one; then `mnemofs fsck` on
# the running mount and again after a clean unmount. Fails on any
# stressor failure, on the mount dying or disappearing, and on fsck
# finding a problem. Removes the mount and scratch data on exit.
#
#   bash scripts/stress.sh                      # from the repo root, ~60 s
#   DURATION=300 WORKERS=4 bash scripts/stress.sh
#   STRESSORS="rename link" bash scripts/stress.sh
#
# Environment: DURATION (60 s, shared by the stressors; at least 3 s
# each), WORKERS (2 instances per stressor), STRESSORS (the list below),
# SCRATCH_PARENT (/var/tmp), KEEP=1 keeps the scratch area (data, logs).
# Installs stress-ng with apt-get when it is missing and we are root.
set -euo pipefail

NAME=stress
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

DURATION=${DURATION:-60}
WORKERS=${WORKERS:-2}
# The stressors that exercise a file system, with their sizes bounded so
# that a run fits a small disk:
#   hdd        write/read/verify files, random and sequential
#   dir        mkdir/rmdir of many directories
#   dentry     create/lookup/unlink of many names (negative dentries too)
#   rename     rename of files round a directory
#   link       hard links: create, stat, unlink
#   symlink    symlinks: create, readlink, unlink
#   filename   names with every allowed character, up to the maximum length
#   fallocate  fallocate/ftruncate of growing and shrinking files
#   open       open/close with many flag combinations
#   chmod      chmod/fchmod of every mode
#   chown      chown/fchown
#   utime      utime/utimes/futimens
#   xattr      set/get/list/remove user xattrs
#   flock      BSD locks between processes
#   lockf      POSIX lockf between processes
#   fcntl      fcntl record locks
#   seek       random pwrite/pread with lseek (SEEK_DATA/HOLE too)
#   fstat      stat/fstat/lstat of the names of a directory of the mount
#   readahead  readahead on a file
#   copy-file  copy_file_range between files
#   mknod      FIFOs and sockets
#   touch      create/remove empty files
STRESSORS=${STRESSORS:-hdd dir dentry rename link symlink filename fallocate open chmod chown utime xattr flock lockf fcntl seek fstat readahead copy-file mknod touch}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}

if ! command -v stress-ng >/dev/null; then
	is_root || die "stress-ng is missing: install it (e.g. 'sudo apt-get install stress-ng')"
	echo "stress: installing stress-ng" >&2
	apt-get install -y stress-ng >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y stress-ng >/dev/null 2>&1; } ||
		die "could not install stress-ng with apt-get"
fi

SCRATCH=$(mktemp -d "$SCRATCH_PARENT/mnemofs-stress.XXXXXX")
MNT=$SCRATCH/mnt
DATA=$SCRATCH/data
MN_PID=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$MN_PID" ] && kill -0 "$MN_PID" 2>/dev/null; then
		kill -TERM "$MN_PID" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$MN_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$MN_PID" 2>/dev/null || true
	fi
	unmount_if_mounted "$MNT"
	if [ "${KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then
		echo "stress: scratch area (data, logs) kept in $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$MNT"
go build -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
MNEMOFS=$SCRATCH/bin/mnemofs

# mounted: the mount process is alive and its mountpoint is mounted.
mounted() { kill -0 "$MN_PID" 2>/dev/null && grep -qF " $MNT fuse" /proc/mounts; }

"$MNEMOFS" mount --data "$DATA" "$MNT" >"$SCRATCH/mount.log" 2>&1 &
MN_PID=$!
for _ in $(seq 300); do
	grep -q "^mnemofs: mounted" "$SCRATCH/mount.log" 2>/dev/null && break
	kill -0 "$MN_PID" 2>/dev/null || { cat "$SCRATCH/mount.log" >&2; die "mount process exited before it was ready"; }
	sleep 0.1
done
mounted || { cat "$SCRATCH/mount.log" >&2; die "mount not ready after 30 s"; }

n=$(wc -w <<<"$STRESSORS")
each=$((DURATION / n))
[ "$each" -ge 3 ] || each=3
echo "stress: $n stressors, $WORKERS instances each, ${each} s each, on $MNT (stress-ng $(stress-ng --version | awk '{print $3}'))" >&2

failed=()
skipped=()
for s in $STRESSORS; do
	dir=$MNT/working/stress-$s
	mkdir -p "$dir"
	# Sizes a small disk holds; --verify checks what is read back.
	opts=()
	case $s in
	hdd) opts=(--hdd-bytes 32M --hdd-write-size 64K --hdd-opts wr-rnd,rd-rnd) ;;
	fallocate) opts=(--fallocate-bytes 32M) ;;
	dir) opts=(--dir-dirs 2048) ;;
	dentry) opts=(--dentries 2048) ;;
	seek) opts=(--seek-size 32M) ;;
	fstat) # stat's its directory's entries, by default in /dev
		for i in $(seq 200); do echo "$i" >"$dir/f$i"; done
		ln -s f1 "$dir/link" && mkdir "$dir/sub" && mkfifo "$dir/fifo"
		opts=(--fstat-dir "$dir")
		;;
	esac
	log=$SCRATCH/stress-$s.log
	rc=0
	# The outer timeout catches a stressor stuck in a request the mount
	# never answers.
	timeout -k 10 $((each + 60)) stress-ng --"$s" "$WORKERS" "${opts[@]}" --temp-path "$dir" --timeout "${each}s" \
		--verify --metrics-brief --log-file "$log" >/dev/null 2>&1 || rc=$?
	case $rc in
	0) echo "stress: $s: ok$(awk -v s="$s" '$4 == s && $5 ~ /^[0-9]+$/ {printf " (%s bogo ops in %s s)", $5, $6; exit}' "$log")" >&2 ;;
	3 | 4) skipped+=("$s") && echo "stress: $s: skipped by stress-ng (exit $rc: not supported here)" >&2 ;;
	124 | 137) failed+=("$s") && echo "stress: $s: HUNG (killed after $((each + 60)) s)" >&2 ;;
	*) failed+=("$s") && echo "stress: $s: FAILED (exit $rc)" >&2 && grep -E "fail|error|FAIL" "$log" | head -20 >&2 ;;
	esac
	if ! mounted; then
		tail -50 "$SCRATCH/mount.log" >&2
		die "the mount died or vanished during the $s stressor"
	fi
	rm -rf "$dir" || { failed+=("$s (cleanup: rm -rf failed)"); echo "stress: $s: removing its directory failed" >&2; }
done

echo "stress: fsck on the running mount" >&2
if ! "$MNEMOFS" fsck --data "$DATA" >"$SCRATCH/fsck-mounted.log" 2>&1 || ! grep -q consistent "$SCRATCH/fsck-mounted.log"; then
	cat "$SCRATCH/fsck-mounted.log" >&2
	failed+=("fsck (mounted)")
fi
kill -TERM "$MN_PID"
for _ in $(seq 200); do kill -0 "$MN_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$MN_PID" 2>/dev/null; then
	failed+=("unmount (SIGTERM ignored for 20 s)")
else
	wait "$MN_PID" || failed+=("unmount (mount exited $?)")
fi
MN_PID=
grep -qF " $MNT fuse" /proc/mounts && failed+=("unmount (still in /proc/mounts)")
echo "stress: fsck after the unmount" >&2
if ! "$MNEMOFS" fsck --data "$DATA" >"$SCRATCH/fsck.log" 2>&1 || ! grep -q consistent "$SCRATCH/fsck.log"; then
	cat "$SCRATCH/fsck.log" >&2
	failed+=("fsck (unmounted)")
fi

[ ${#skipped[@]} = 0 ] || echo "stress: skipped: ${skipped[*]}" >&2
if [ ${#failed[@]} != 0 ]; then
	die "FAILED: ${failed[*]} (logs in $SCRATCH)"
fi
echo "stress: all $((n - ${#skipped[@]})) stressors passed, fsck clean" >&2
