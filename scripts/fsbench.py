#!/usr/bin/env python3
"""fsbench.py: the second harness of scripts/bench-fs.sh.

It measures the same operations as scripts/fsbench (Go, raw syscalls), but
the way an agent's Python code does them: open()/write()/close() through
Python's buffered file objects, os.stat, os.listdir + os.lstat, os.replace,
os.remove, open(..., "a") for an appended line, and shutil-free 1 MiB
sequential writes and reads. Its output is the same JSON report as
`fsbench -json`, so `fsbench table` prints both harnesses alike and the
numbers do not depend on one harness (Go's runtime, Python's interpreter).

    python3 scripts/fsbench.py -label native -n 500 /var/tmp/somedir > r.json

Only the standard library is used. Latencies are in microseconds.
"""

import argparse
import json
import os
import sys
import tempfile
import time


def quantile(xs, q):
    if not xs:
        return 0.0
    i = min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))
    return xs[i]


def latency(name, ds, div=1, note=""):
    """ds: durations in ns, each covering div operations (entries)."""
    per = sorted(d / div / 1e3 for d in ds)
    r = {
        "name": name,
        "unit": "us",
        "n": len(ds) * div,
        "median": quantile(per, 0.5),
        "p95": quantile(per, 0.95),
        "mean": sum(per) / len(per) if per else 0.0,
    }
    if note:
        r["note"] = note
    return r


def write_file(p, data, mode):
    with open(p, mode) as f:
        f.write(data)


def run(args):
    base = os.path.join(args.dir, "working", "bench")
    os.makedirs(base, exist_ok=True)
    root = tempfile.mkdtemp(prefix="py-run-", dir=base)
    n = args.n
    kib = bytes((i * 7) & 0xFF for i in range(1024))
    results = []
    clock = time.perf_counter_ns

    def mk(sub):
        p = os.path.join(root, sub)
        os.mkdir(p)
        return p

    cdir, rdir, udir = mk("create"), mk("renamed"), mk("unlink")

    def name(d, i):
        return os.path.join(d, "note-%05d.md" % i)

    # create + write 1 KiB + close (exclusive create, as an agent's "x").
    created = time.monotonic()
    ds = []
    for i in range(n):
        t = clock()
        write_file(name(cdir, i), kib, "xb")
        ds.append(clock() - t)
    results.append(latency("create+write 1KiB+close", ds))

    ds = []
    for i in range(n):
        p = name(cdir, i)
        t = clock()
        os.stat(p)
        ds.append(clock() - t)
    results.append(latency("stat existing", ds))

    ds = []
    for i in range(n):
        p = os.path.join(cdir, "missing-%05d.md" % i)
        t = clock()
        try:
            os.stat(p)
            sys.exit("stat of a missing name succeeded: " + p)
        except FileNotFoundError:
            pass
        ds.append(clock() - t)
    results.append(latency("stat missing", ds))

    ds = []
    for i in range(n):
        p = name(cdir, i)
        t = clock()
        with open(p, "rb") as f:
            b = f.read(1024)
        ds.append(clock() - t)
        if len(b) != 1024:
            sys.exit("read %d bytes of %s, want 1024" % (len(b), p))
    results.append(latency("open+read 1KiB+close", ds))

    ds = []
    for i in range(n):
        src, dst = name(cdir, i), os.path.join(rdir, "moved-%05d.md" % i)
        t = clock()
        os.replace(src, dst)
        ds.append(clock() - t)
    results.append(latency("rename to other dir", ds))

    # unlink of files made moments before, in batches of 100.
    ds = []
    for i in range(0, n, 100):
        batch = range(i, min(i + 100, n))
        for j in batch:
            write_file(name(udir, j), kib, "xb")
        for j in batch:
            t = clock()
            os.remove(name(udir, j))
            ds.append(clock() - t)
    results.append(latency("unlink (new file)", ds))

    # unlink of files older than 3 s (mnemofs moves them to the trash).
    wait = 3.5 - (time.monotonic() - created)
    if wait > 0:
        time.sleep(wait)
    ds = []
    for i in range(n):
        p = os.path.join(rdir, "moved-%05d.md" % i)
        t = clock()
        os.remove(p)
        ds.append(clock() - t)
    results.append(latency("unlink (old file; mnemofs: → trash)", ds))

    line = (b"-" * 60 + b" appended line" + b" " * 80)[:79] + b"\n"
    logf = os.path.join(root, "append.log")
    ds = []
    for i in range(n):
        t = clock()
        write_file(logf, line, "ab")
        ds.append(clock() - t)
    size = os.stat(logf).st_size
    if size != 80 * n:
        sys.exit("append.log has %d bytes, want %d" % (size, 80 * n))
    results.append(latency("append 80B line (O_APPEND)+close", ds, 1, "file grows to %d KiB" % (80 * n // 1024)))

    ddir = mk("dir")
    for i in range(args.files):
        write_file(name(ddir, i), kib, "xb")

    def dir_pass():
        t = clock()
        names = os.listdir(ddir)
        for nm in names:
            os.lstat(os.path.join(ddir, nm))
        d = clock() - t
        if len(names) != args.files:
            sys.exit("listdir found %d entries, want %d" % (len(names), args.files))
        return d

    dir_pass()
    ds = [dir_pass() for _ in range(args.readdir_n)]
    results.append(latency("readdir+lstat per entry (%d, warm)" % args.files, ds, args.files))

    if args.seq_mib > 0:
        results += sequential(os.path.join(root, "big.bin"), args.seq_mib)

    if not args.keep:
        for dirpath, dirnames, filenames in os.walk(root, topdown=False):
            for f in filenames:
                os.remove(os.path.join(dirpath, f))
            for d in dirnames:
                os.rmdir(os.path.join(dirpath, d))
        os.rmdir(root)
    return results


def sequential(p, mib):
    buf = bytes((i * 7) & 0xFF for i in range(256)) * 4096  # 1 MiB
    t = time.perf_counter()
    with open(p, "wb", buffering=0) as f:
        for _ in range(mib):
            f.write(buf)
        os.fsync(f.fileno())
    w = {"name": "seq write %d MiB (1 MiB writes, fsync)" % mib, "unit": "MiB/s", "n": 1,
         "median": mib / (time.perf_counter() - t)}
    time.sleep(1)
    os.sync()
    note = "page cache dropped"
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        note = "page cache NOT dropped"

    def read(name, note):
        t = time.perf_counter()
        got = 0
        with open(p, "rb", buffering=0) as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                got += len(b)
        if got != mib << 20:
            sys.exit("read %d bytes of %s, want %d" % (got, p, mib << 20))
        return {"name": name, "unit": "MiB/s", "n": 1, "median": mib / (time.perf_counter() - t), "note": note}

    return [w, read("seq read %d MiB (cold)" % mib, note), read("seq read %d MiB (warm)" % mib, "")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("-n", type=int, default=2000, help="iterations per latency operation")
    ap.add_argument("-files", type=int, default=1000, help="entries in the readdir directory")
    ap.add_argument("-readdir-n", dest="readdir_n", type=int, default=20, help="warm readdir+lstat passes")
    ap.add_argument("-seq-mib", dest="seq_mib", type=int, default=64, help="sequential file size in MiB (0 skips)")
    ap.add_argument("-label", default="", help="name of this target in the output")
    ap.add_argument("-keep", action="store_true", help="leave the run directory behind")
    args = ap.parse_args()
    results = run(args)
    rep = {"label": args.label or args.dir, "dir": args.dir, "iters": args.n, "files": args.files,
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": results}
    json.dump(rep, sys.stdout, indent=1, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
