# SPDX-License-Identifier: GPL-2.0
"""A real user of pda_pool.h: memcached 1.6.18 with its worker stats
counters on one per-CPU pool object (users/memcached/memcached-pda.patch),
beside the same source unmodified.

Debian bookworm's memcached source package is fetched with a private apt
state under the cache (deb-src lines for the host's own Debian mirrors,
as `apt-get indextargets` names them; nothing of the host's apt changes),
checked to unpack, and its pristine upstream tarball (checked by its
sha256) is built twice: unmodified, and patched with -I of
tools/lib/pda.  Then, serially: memcached's own `make test` on both, an
exact-stats check on both (a fixed sequence of commands whose `stats`
and `stats slabs` figures must be the expected numbers, before and after
`stats reset`), and a load measurement (users/memcached/mcload.c):
unmodified and patched alternating, a fresh server per run, the server's
CPU time per request.  Writes results/MEMCACHED.md.
"""

import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import debs
from .paths import CACHE, LOGS, REPO
from .progress import Phase, StepFailed, reset_log, run, say, tail

VERSION = "1.6.18"
CODENAME = "bookworm"
ORIG = f"memcached_{VERSION}.orig.tar.xz"
ORIG_SHA256 = \
    "35872bd25f8d29d7cc2072d23e74344530891bfd0aa4f4f64184a8ae7291164b"
BUILD_DEPS = ("libevent-dev",)

WORK = CACHE / "memcached"
# Its own apt state: deb-src lines of bookworm on the host's mirrors.
SOURCES = debs.Archive(WORK / "apt", WORK / "debs", codename=CODENAME,
                       src=True)
SRC = WORK / "src"
LOG_DIR = LOGS / "memcached"
USERS = REPO / "users/memcached"
PATCH = USERS / "memcached-pda.patch"
MCLOAD = USERS / "mcload.c"
PDA_INCLUDE = REPO / "tools/lib/pda"
RESULTS = REPO / "results/MEMCACHED.md"
# What the last run found, for --report-only.
STATE = WORK / "state.json"
VARIANTS = ("unmodified", "patched")

# The server of every run; -u nobody is added when running as root.
SERVER_ARGS = ("-l", "127.0.0.1", "-U", "0", "-t", "4", "-m", "256",
               "-c", "1024")
ROUNDS = 5
# mcload's per-thread preload (NKEYS in mcload.c).
PRELOAD = 1000


@dataclass(frozen=True)
class Load:
    name: str
    desc: str
    threads: int
    requests: int       # per thread
    depth: int
    keys_per_get: int
    set_every: int      # 0: no sets

    def args(self):
        return [str(v) for v in (self.threads, self.requests, self.depth,
                                 self.keys_per_get, self.set_every)]

    def sets(self):
        """Timed sets per thread."""
        return len(range(0, self.requests, self.set_every)) \
            if self.set_every else 0

    def expected(self):
        """The server's counters after one run: exact."""
        gets = self.threads * (self.requests - self.sets()) * \
            self.keys_per_get
        return {"cmd_get": gets, "get_hits": gets, "get_misses": 0,
                "cmd_set": self.threads * (PRELOAD + self.sets())}


LOADS = (
    Load("rr1key", "4 threads, depth 1, 1-key gets, every 10th request "
         "a set", 4, 100000, 1, 1, 10),
    Load("mget100", "4 threads, depth 8, 100-key gets, no sets",
         4, 10000, 8, 100, 0),
)


def _log(name):
    return LOG_DIR / f"{name}.log"


def build_dir(variant):
    return WORK / "build" / variant


# -- the source ------------------------------------------------------------

def fetch_source(log):
    """The source package's files in SRC (fetched once), unpacked with
    dpkg-source as a check; returns the upstream tarball."""
    orig = SRC / ORIG
    if not (orig.exists() and list(SRC.glob("memcached_*.dsc"))):
        with debs.lock(SOURCES):
            conf = debs.apt_config(SOURCES)
            debs.apt(conf, ["update"], log)
            shutil.rmtree(SRC, ignore_errors=True)
            SRC.mkdir(parents=True)
            debs.apt(conf, ["source", "--download-only", "memcached"], log,
                     cwd=SRC)
    if not orig.exists():
        raise StepFailed(f"memcached: {ORIG} not in the source package "
                         f"({SRC}): not version {VERSION}?\n  log: {log}")
    digest = hashlib.sha256(orig.read_bytes()).hexdigest()
    if digest != ORIG_SHA256:
        raise StepFailed(f"memcached: {orig}: sha256 {digest}, expected "
                         f"{ORIG_SHA256}")
    dsc = sorted(SRC.glob("memcached_*.dsc"))[-1]
    unpacked = WORK / "debian-source"
    shutil.rmtree(unpacked, ignore_errors=True)
    run(["dpkg-source", "-x", dsc, unpacked], log, what="dpkg-source -x")
    return orig, dsc.name


def build_deps(log):
    """apt-get install of the missing build dependencies."""
    missing = [p for p in BUILD_DEPS if subprocess.run(
        ["dpkg-query", "-W", "-f", "${Status}", p], capture_output=True,
        text=True).stdout != "install ok installed"]
    if not missing:
        return
    if os.geteuid() != 0:
        raise StepFailed("memcached: missing packages "
                         f"{' '.join(missing)}: run as root, or "
                         f"apt-get install {' '.join(missing)}")
    run(["apt-get", "install", "-y", "--no-install-recommends", *missing],
        log, env={"DEBIAN_FRONTEND": "noninteractive"},
        what="apt-get install")


def package_version(name):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", name],
                         capture_output=True, text=True)
    return out.stdout.strip() or "?"


# -- builds and memcached's tests ------------------------------------------

def build(variant, orig, log):
    """The upstream tree of @variant configured and built (make all, as
    make test needs timedrun too); returns its directory."""
    top = build_dir(variant)
    shutil.rmtree(top, ignore_errors=True)
    top.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=top.parent) as tmp:
        run(["tar", "-xf", orig, "-C", tmp], log, what="tar -x")
        Path(tmp, f"memcached-{VERSION}").rename(top)
    env = {}
    if variant == "patched":
        run(["patch", "-p1", "--dry-run", "-i", PATCH], log, cwd=top,
            what="patch --dry-run")
        run(["patch", "-p1", "-i", PATCH], log, cwd=top, what="patch")
        env["CPPFLAGS"] = f"-I{PDA_INCLUDE}"
    run(["./configure"], log, cwd=top, env=env, what="configure")
    run(["make", f"-j{os.cpu_count() or 1}"], log, cwd=top, env=env,
        what="make")
    return top


def parse_make_test(log):
    """What memcached's `make test` printed: testapp's TAP counts,
    prove's summary and the skipped test files."""
    lines = Path(log).read_text(errors="replace").splitlines()
    r = {"testapp_ok": 0, "testapp_not_ok": 0, "testapp_plan": None,
         "prove": None, "result": None, "skipped": []}
    in_prove = False
    for line in lines:
        if line.startswith("t/"):
            in_prove = True
            if " skipped: " in line:
                name, why = line.split(" skipped: ", 1)
                r["skipped"].append((name.split()[0], why.strip()))
        elif not in_prove and line.startswith("1.."):
            r["testapp_plan"] = int(line[3:])
        elif not in_prove and line.startswith("ok "):
            r["testapp_ok"] += 1
        elif not in_prove and line.startswith("not ok "):
            r["testapp_not_ok"] += 1
        elif line.startswith("Files="):
            r["prove"] = [x.strip() for x in line.split(",")[0:2]]
        elif line.startswith("Result: "):
            r["result"] = line[len("Result: "):].strip()
    return r


def make_test(variant, log):
    """memcached's `make test`; returns (passed, parsed output)."""
    try:
        run(["make", "test"], log, cwd=build_dir(variant),
            what="make test", timeout=3600)
        ok = True
    except StepFailed as e:
        say(str(e))
        ok = False
    parsed = parse_make_test(log)
    ok = ok and parsed["result"] == "PASS" and not parsed["testapp_not_ok"] \
        and parsed["testapp_ok"] == parsed["testapp_plan"]
    return ok, parsed


# -- a server --------------------------------------------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A fresh memcached of @variant on a free port, stopped on exit."""

    def __init__(self, variant, log):
        self.variant, self.log = variant, log

    def __enter__(self):
        self.port = _free_port()
        args = [build_dir(self.variant) / "memcached", *SERVER_ARGS,
                "-p", str(self.port)]
        if os.geteuid() == 0:
            args += ["-u", "nobody"]
        with open(self.log, "a") as out:
            out.write(f"\n$ {' '.join(map(str, args))}\n")
            out.flush()
            self.proc = subprocess.Popen([str(a) for a in args], stdout=out,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise StepFailed(f"memcached ({self.variant}) exited "
                                 f"{self.proc.returncode}\n  log: "
                                 f"{self.log}\n{tail(self.log)}")
            try:
                socket.create_connection(("127.0.0.1", self.port),
                                         timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self._stop()
        raise StepFailed(f"memcached ({self.variant}) did not listen on "
                         f"port {self.port}\n  log: {self.log}")

    def _stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __exit__(self, *exc):
        self._stop()
        return False


class Client:
    """One text-protocol connection."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.f = self.sock.makefile("rwb")

    def close(self):
        self.f.close()
        self.sock.close()

    def line(self):
        return self.f.readline().decode().rstrip("\r\n")

    def cmd(self, text):
        """Send @text; returns the first reply line."""
        self.f.write(text.encode())
        self.f.flush()
        return self.line()

    def get(self, key):
        """The value of @key, or None."""
        first = self.cmd(f"get {key}\r\n")
        if first == "END":
            return None
        value = self.line()
        if self.line() != "END":
            raise AssertionError(f"get {key}: no END")
        return value

    def stats(self, arg=""):
        self.f.write(f"stats{' ' + arg if arg else ''}\r\n".encode())
        self.f.flush()
        out = {}
        while True:
            line = self.line()
            if line == "END":
                return out
            parts = line.split()
            if len(parts) != 3 or parts[0] != "STAT":
                raise AssertionError(f"stats {arg}: {line!r}")
            out[parts[1]] = parts[2]


# -- the exact-stats check -------------------------------------------------

# What `stats` shows after the commands of stat_check(), before `stats
# reset`: 11 sets, 15 gets of which 10 hits, 2 touches, incr and decr,
# 2 deletes.  The bytes are the commands' lengths (421, the "stats"
# being answered included) and the replies' (410).
STATS_BEFORE = {
    "cmd_get": 15, "get_hits": 10, "get_misses": 5, "get_expired": 0,
    "cmd_set": 11, "cmd_touch": 2, "touch_hits": 1, "touch_misses": 1,
    "incr_hits": 1, "incr_misses": 1, "decr_hits": 1, "decr_misses": 0,
    "delete_hits": 1, "delete_misses": 1, "cas_misses": 0, "cas_hits": 0,
    "bytes_read": 421, "bytes_written": 410,
}
SLABS_BEFORE = {"1:get_hits": 10, "1:cmd_set": 11, "1:touch_hits": 1,
                "1:incr_hits": 1, "1:decr_hits": 1, "1:delete_hits": 1}
# Right after the reset: only the "stats" being answered (7 bytes read)
# and the reset's "RESET\r\n" (7 bytes written) count.
STATS_RESET = dict({k: 0 for k in STATS_BEFORE}, bytes_read=7,
                   bytes_written=7)
# Then one get hit and a "stats" again (bytes_written depends on the
# length of the last stats reply, so it is not checked).
STATS_AFTER = dict({k: 0 for k in STATS_BEFORE}, cmd_get=1, get_hits=1,
                   bytes_read=22)
del STATS_AFTER["bytes_written"]
SLABS_AFTER = {"1:get_hits": 1, "1:cmd_set": 0}


def _differences(what, got, want):
    return [f"{what} {k}: {got.get(k)} (expected {v})"
            for k, v in want.items() if got.get(k) != str(v)]


def stat_check(port):
    """The fixed sequence; returns the differences from the expected
    numbers (empty: exact)."""
    c = Client(port)
    bad = []

    def expect(cmd, reply):
        got = c.cmd(cmd)
        if got != reply:
            bad.append(f"{cmd.strip()!r}: {got!r} (expected {reply!r})")
    try:
        for i in range(10):
            expect(f"set k{i} 0 0 3\r\nabc\r\n", "STORED")
        for i in range(15):
            want = "abc" if i < 10 else None
            if c.get(f"k{i}") != want:
                bad.append(f"get k{i}: expected {want!r}")
        expect("touch k0 0\r\n", "TOUCHED")
        expect("touch nokey 0\r\n", "NOT_FOUND")
        expect("set n 0 0 1\r\n5\r\n", "STORED")
        expect("incr n 3\r\n", "8")
        expect("decr n 2\r\n", "6")
        expect("incr nokey 1\r\n", "NOT_FOUND")
        expect("delete k9\r\n", "DELETED")
        expect("delete k9\r\n", "NOT_FOUND")
        bad += _differences("stats", c.stats(), STATS_BEFORE)
        bad += _differences("stats slabs", c.stats("slabs"), SLABS_BEFORE)
        expect("stats reset\r\n", "RESET")
        bad += _differences("after reset: stats", c.stats(), STATS_RESET)
        if c.get("k1") != "abc":
            bad.append("after reset: get k1: expected 'abc'")
        bad += _differences("after reset and a get: stats", c.stats(),
                            STATS_AFTER)
        bad += _differences("after reset and a get: stats slabs",
                            c.stats("slabs"), SLABS_AFTER)
    finally:
        c.close()
    return bad


# -- the load measurement --------------------------------------------------

def perf_works(log):
    """Whether `perf stat -e task-clock` counts here."""
    if not shutil.which("perf"):
        return False
    out = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock",
                          "--", "true"], capture_output=True, text=True)
    with open(log, "a") as f:
        f.write(f"\n$ perf stat -x, -e task-clock -- true\n{out.stderr}")
    return out.returncode == 0 and _perf_msec(out.stderr) is not None


def _perf_msec(text):
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("task-clock"):
            try:
                return float(fields[0])
            except ValueError:
                return None
    return None


def _proc_cpu_ms(pid):
    """utime + stime of @pid, in ms."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1000.0 / os.sysconf("SC_CLK_TCK")


def load_run(variant, load, mcload, use_perf, log):
    """One run on a fresh server: a dict of the figures."""
    with Server(variant, log) as srv:
        pid = srv.proc.pid
        if use_perf:
            out = LOG_DIR / f"perf-{variant}.txt"
            perf = subprocess.Popen(
                ["perf", "stat", "-x,", "-e", "task-clock", "-p", str(pid),
                 "-o", str(out)], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            time.sleep(0.3)     # attached before the load starts
        else:
            before = _proc_cpu_ms(pid)
        res = subprocess.run([str(mcload), str(srv.port), *load.args()],
                             capture_output=True, text=True, timeout=900)
        with open(log, "a") as f:
            f.write(f"\n$ mcload {srv.port} {' '.join(load.args())}\n"
                    f"{res.stdout}{res.stderr}")
        if res.returncode:
            raise StepFailed(f"mcload failed (exit {res.returncode})\n  "
                             f"log: {log}\n{tail(log)}")
        if use_perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=30)
            cpu_ms = _perf_msec(out.read_text())
            if cpu_ms is None:
                raise StepFailed(f"perf stat wrote no task-clock: {out}")
        else:
            cpu_ms = _proc_cpu_ms(pid) - before
        c = Client(srv.port)
        try:
            counters = c.stats()
        finally:
            c.close()
    words = res.stdout.split()
    wall, rps = float(words[1]), float(words[3])
    total = load.threads * load.requests
    return {"config": load.name, "variant": variant, "wall_s": wall,
            "req_per_s": rps, "cpu_ms": cpu_ms,
            "ns_per_req": cpu_ms * 1e6 / total,
            "counters": _differences("stats", counters, load.expected())}


def pool_method(log):
    """pda_pool_method_name() of a program built as the patched server is
    (the same header and compiler, on this kernel and glibc):
    memcached does not print it."""
    src = WORK / "method.c"
    exe = WORK / "method"
    src.write_text('#include <stdio.h>\n#include "pda_pool.h"\n'
                   "int main(void)\n{\n\tprintf(\"%s\\n\", "
                   "pda_pool_method_name(pda_pool_method()));\n"
                   "\treturn 0;\n}\n")
    run(["gcc", "-O2", f"-I{PDA_INCLUDE}", "-pthread", "-o", exe, src], log,
        what="gcc method.c")
    return subprocess.run([str(exe)], capture_output=True, text=True,
                          check=True).stdout.strip()


# -- the machine ------------------------------------------------------------

def machine():
    info = {"model": "?", "hypervisor": None}
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Model name":
            info["model"] = value.strip()
        elif key.strip() == "Hypervisor vendor":
            info["hypervisor"] = value.strip()
    info["online"] = os.cpu_count()
    info["possible"] = Path("/sys/devices/system/cpu/possible") \
        .read_text().strip()
    info["kernel"] = platform.release()
    info["gcc"] = subprocess.run(["gcc", "-dumpfullversion"],
                                 capture_output=True,
                                 text=True).stdout.strip()
    info["glibc"] = platform.libc_ver()[1]
    info["libevent"] = package_version("libevent-dev")
    return info


def text_size(variant):
    """The memcached binary's text, in bytes (size's Berkeley format)."""
    out = subprocess.run(["size", str(build_dir(variant) / "memcached")],
                         capture_output=True, text=True).stdout
    return int(out.splitlines()[1].split()[0])


def loadavg():
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


# -- the command ------------------------------------------------------------

class Tap:
    def __init__(self):
        self.results = []

    def result(self, ok, name, detail=""):
        self.results.append((ok, name, detail))
        n = len(self.results)
        say(f"{'ok' if ok else 'not ok'} {n} - {name}"
            f"{' # ' + detail if detail else ''}")
        return ok

    def counts(self):
        passed = sum(1 for ok, _, _ in self.results if ok)
        return passed, len(self.results) - passed


def main():
    start = time.monotonic()
    state = {"started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "load_start": loadavg(), "times": {}}
    tap = Tap()
    if platform.architecture()[0] != "64bit" or \
            subprocess.run(["getconf", "LONG_BIT"], capture_output=True,
                           text=True).stdout.strip() != "64":
        raise StepFailed("memcached: the patch needs a 64-bit build "
                         "(unsigned long of 64 bits); this host is not")
    LOG_DIR.mkdir(parents=True, exist_ok=True)

    def phase(name, log, fn):
        t0 = time.monotonic()
        with Phase("memcached", name, log):
            value = fn()
        state["times"][name] = time.monotonic() - t0
        return value

    log = reset_log(_log("source"))
    orig, dsc = phase("source and build deps", log,
                      lambda: (fetch_source(log), build_deps(log))[0])
    state["dsc"] = dsc
    tap.result(True, f"source: {dsc} fetched and unpacked, {ORIG} "
               "sha256 as expected")

    for v in VARIANTS:
        log = reset_log(_log(f"build-{v}"))
        phase(f"build {v}", log, lambda v=v, log=log: build(v, orig, log))
        tap.result(True, f"build {v}")

    state["make_test"] = {}
    for v in VARIANTS:
        log = reset_log(_log(f"test-{v}"))
        ok, parsed = phase(f"make test {v}", log,
                           lambda v=v, log=log: make_test(v, log))
        state["make_test"][v] = (ok, parsed)
        tap.result(ok, f"make test {v}", f"testapp {parsed['testapp_ok']}/"
                   f"{parsed['testapp_plan']} ok, prove "
                   f"{' '.join(parsed['prove'] or ['?'])}: "
                   f"{parsed['result']}, {len(parsed['skipped'])} files "
                   "skipped")
    skipped = [[n for n, _ in state["make_test"][v][1]["skipped"]]
               for v in VARIANTS]
    tap.result(skipped[0] == skipped[1], "make test: the same test files "
               "skipped in both", ", ".join(skipped[0]))

    state["statcheck"] = {}
    for v in VARIANTS:
        log = reset_log(_log(f"statcheck-{v}"))

        def check(v=v, log=log):
            with Server(v, log) as srv:
                return stat_check(srv.port)
        bad = phase(f"exact stats {v}", log, check)
        state["statcheck"][v] = bad
        tap.result(not bad, f"exact stats {v}", "; ".join(bad[:5]))

    log = reset_log(_log("load"))
    mcload = WORK / "mcload"
    run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o",
         mcload, MCLOAD], log, what="gcc mcload.c")
    state["method"] = pool_method(log)
    state["perf"] = perf_works(log)
    state["machine"] = machine()
    state["load_before"] = loadavg()

    def measure():
        rows = []
        for load in LOADS:
            for r in range(1, ROUNDS + 1):
                for v in VARIANTS:
                    row = load_run(v, load, mcload, state["perf"], log)
                    row["round"] = r
                    rows.append(row)
                    say(f"[memcached] {load.name} round {r} {v}: "
                        f"{row['wall_s']:.3f} s, "
                        f"{row['ns_per_req']:.0f} ns CPU/request")
        return rows
    rows = phase(f"load, {ROUNDS} rounds per config and variant", log,
                 measure)
    state["load_after"] = loadavg()
    state["rows"] = rows
    with open(LOG_DIR / "load.csv", "w") as f:
        f.write("config,round,variant,wall_s,req_per_s,server_cpu_ms,"
                "server_cpu_ns_per_req\n")
        for r in rows:
            f.write(f"{r['config']},{r['round']},{r['variant']},"
                    f"{r['wall_s']:.4f},{r['req_per_s']:.0f},"
                    f"{r['cpu_ms']:.2f},{r['ns_per_req']:.0f}\n")
    for v in VARIANTS:
        bad = [f"{r['config']} round {r['round']}: {d}" for r in rows
               if r["variant"] == v for d in r["counters"]]
        tap.result(not bad, f"load: {v} server's cmd_get, get_hits, "
                   "get_misses and cmd_set exact after every run",
                   "; ".join(bad[:3]))

    state["text"] = {v: text_size(v) for v in VARIANTS}
    state["took"] = time.monotonic() - start
    state["load_end"] = loadavg()
    state["tap"] = tap.results
    STATE.write_text(json.dumps(state, indent=1))
    RESULTS.write_text(report(state))
    passed, failed = tap.counts()
    say(f"[memcached] took {state['took'] / 60:.1f} min; wrote "
        f"{RESULTS.relative_to(REPO)}; logs in {LOG_DIR}")
    say(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


# -- results/MEMCACHED.md ---------------------------------------------------

def report_only():
    """results/MEMCACHED.md again from the last run's state."""
    if not STATE.exists():
        raise StepFailed(f"memcached: no {STATE}: run scripts/pda "
                         "memcached first")
    RESULTS.write_text(report(json.loads(STATE.read_text())))
    say(f"[memcached] wrote {RESULTS.relative_to(REPO)} from {STATE}")
    return 0


def summary(rows):
    """{(config, variant): figures} and {config: pairs the patched
    server used less CPU in}."""
    out, wins = {}, {}
    for load in LOADS:
        for v in VARIANTS:
            rr = [r for r in rows if r["config"] == load.name and
                  r["variant"] == v]
            out[load.name, v] = {
                "n": len(rr),
                "wall_min": min(r["wall_s"] for r in rr),
                "wall_med": statistics.median(r["wall_s"] for r in rr),
                "rps_med": statistics.median(r["req_per_s"] for r in rr),
                "ns_min": min(r["ns_per_req"] for r in rr),
                "ns_med": statistics.median(r["ns_per_req"] for r in rr)}
        base = {r["round"]: r["ns_per_req"] for r in rows
                if r["config"] == load.name and r["variant"] == "unmodified"}
        wins[load.name] = sum(
            1 for r in rows if r["config"] == load.name and
            r["variant"] == "patched" and r["ns_per_req"] < base[r["round"]])
    return out, wins


def report(s):
    m = s["machine"]
    cpu_how = "`perf stat -x, -e task-clock -p PID`, attached after the " \
        "server listens and stopped after the load" if s["perf"] else \
        "utime + stime of /proc/PID/stat, read before and after the " \
        "load (perf stat -e task-clock did not work here)"
    passed = sum(1 for ok, _, _ in s["tap"] if ok)
    L = [
        "# memcached with its worker stats on a pda_pool",
        "",
        "Generated by `make memcached` (`scripts/pda memcached`, "
        "scripts/harness/memcached.py); do not edit.  Last run: "
        f"{s['started']}, {s['took'] / 60:.1f} min.",
        "",
        f"memcached {VERSION}, Debian {CODENAME}'s source package "
        f"(`{s['dsc']}`, fetched with a private apt state from the host's "
        f"Debian mirror), built from its pristine upstream tarball "
        f"(`{ORIG}`, sha256 `{ORIG_SHA256}`; Debian's patches not applied) "
        "twice: unmodified, and with `users/memcached/memcached-pda.patch` "
        "and `-I tools/lib/pda`.  The patch moves every per-request "
        "counter of the worker threads (struct thread_stats, slab_stats, "
        "lru_hits) from the per-thread struct under its mutex onto ONE "
        "per-CPU pool object shared by all threads; `stats reset` records "
        "a baseline instead of zeroing other CPUs' copies (the patch's "
        "description says why that is exact).  Default configure "
        "(extstore on; proxy, TLS and SASL off), "
        f"`make -j{m['online']}`; gcc {m['gcc']}, glibc {m['glibc']}, "
        f"libevent-dev {m['libevent']}.",
        "",
        "## Tests",
        "",
        "| # | result | test | detail |",
        "|---|---|---|---|",
    ]
    for i, (ok, name, detail) in enumerate(s["tap"], 1):
        detail = detail.replace("|", "\\|")
        L.append(f"| {i} | {'ok' if ok else '**not ok**'} | {name} | "
                 f"{detail} |")
    L += ["", f"{passed} passed, {len(s['tap']) - passed} failed.", "",
          "apt checked the source package's files against the archive's "
          "signed index; `dpkg-source -x` (run to check that the package "
          "unpacks, Debian's patches applied) finds no Debian keyring here "
          "and says it cannot verify the .dsc's own signature.", ""]
    L += ["`make test` is memcached's own suite: `sizes`, `testapp` (C unit "
          "tests) and `prove t/*.t`, run serially, one tree after the "
          "other:", "",
          "| | " + " | ".join(VARIANTS) + " |", "|---|---|---|"]
    mt = s["make_test"]
    L.append("| testapp | " + " | ".join(
        f"{mt[v][1]['testapp_ok']}/{mt[v][1]['testapp_plan']} ok"
        for v in VARIANTS) + " |")
    L.append("| prove | " + " | ".join(
        f"{', '.join(mt[v][1]['prove'] or ['?'])}: {mt[v][1]['result']}"
        for v in VARIANTS) + " |")
    L.append("| wall time | " + " | ".join(
        f"{s['times'][f'make test {v}']:.0f} s" for v in VARIANTS) + " |")
    skipped = mt["unmodified"][1]["skipped"]
    L += ["", "The test files prove skipped (every one for the reason it "
          "prints; the count of Tests varies between runs, since some "
          "files loop for a while and count as they go):", ""]
    L += [f"- `{name}`: {why}" for name, why in skipped]
    L += ["", "The exact-stats check (`stat_check()` in "
          "scripts/harness/memcached.py) sends 11 sets, 15 gets (10 hits), "
          "2 touches, an incr, a decr, a missed incr and 2 deletes, then "
          "checks 18 counters of `stats` (`bytes_read` and `bytes_written` "
          "among them) and 6 of `stats slabs` that they move against fixed "
          "numbers; then `stats reset` (all zero but the reset's own "
          "bytes), one get, and the numbers again.", ""]

    summ, wins = summary(s["rows"])
    L += ["## Server CPU per request", "",
          f"Machine: {m['model']}, {m['online']} CPUs online, possible "
          f"CPUs {m['possible']}"
          f"{', a ' + m['hypervisor'] + ' guest' if m['hypervisor'] else ''}"
          f", kernel {m['kernel']}.  The patched server's pool method: "
          f"**{s['method']}** (`pda_pool_method_name()` of a program built "
          "with the same header and compiler on this host: memcached itself "
          "does not print it).  Load average (1, 5, 15 min): "
          f"{s['load_start']} at the start of the run, {s['load_before']} "
          f"before the measurement, {s['load_end']} at its end.", "",
          f"Server: `memcached {' '.join(SERVER_ARGS)} -p PORT` "
          "(`-u nobody` as root).  Client: `users/memcached/mcload.c`, on "
          "the same machine over loopback: one TCP connection per thread, "
          f"{PRELOAD} keys of 32-byte values preloaded per thread, then a "
          "fixed count of pipelined requests, all gets hits; its wall time "
          "starts after the preload.  Unmodified and patched alternate, "
          f"{ROUNDS} rounds per config, a fresh server per run.  Server "
          f"CPU: {cpu_how}; it includes the preload (the same for both), "
          "divided by the timed requests.  After every run the server's "
          "cmd_get, get_hits, get_misses and cmd_set must be the exact "
          "numbers the client sent.", "",
          "| config | variant | n | wall s min | wall s median | req/s "
          "median | server CPU ns/req min | server CPU ns/req median |",
          "|---|---|---|---|---|---|---|---|"]
    for load in LOADS:
        for v in VARIANTS:
            f = summ[load.name, v]
            first = f"{load.name}: {load.desc}" if v == VARIANTS[0] else ""
            L.append(f"| {first} | {v} | {f['n']} | {f['wall_min']:.3f} | "
                     f"{f['wall_med']:.3f} | {f['rps_med']:.0f} | "
                     f"{f['ns_min']:.0f} | {f['ns_med']:.0f} |")
    L.append("")
    for load in LOADS:
        b, p = summ[load.name, "unmodified"], summ[load.name, "patched"]
        change = (p["ns_med"] - b["ns_med"]) / b["ns_med"] * 100
        L.append(f"- {load.name}: patched median server CPU per request "
                 f"{change:+.1f} % against unmodified; the patched server "
                 f"used less CPU in {wins[load.name]} of {ROUNDS} "
                 "alternating pairs.")
    L += ["", "Raw figures: `load.csv` in the log directory "
          "(`${XDG_CACHE_HOME:-$HOME/.cache}/pda/logs/memcached/`).", ""]

    L += ["## Caveats", "",
          f"- The method here is **{s['method']}**."
          + (" The process found no user per-CPU segment (the host kernel, "
             f"{m['kernel']}, is not a PDA kernel with "
             "CONFIG_X86_PDA_USER_SEG), so every counter bump is one rseq "
             "critical section on this CPU's copy, with no lock prefix: "
             "about 24 instructions, a 6-instruction path check and the "
             "section (a static count from the disassembly of the inlined "
             "update, made when the patch was written).  On a PDA kernel "
             "with the segment the same binary takes PDA_POOL_SEGMENT: "
             "each bump is the check and one unlocked `add` through the "
             "segment, 7 instructions.  That should cut the stats cost "
             "further; it is a projection, not measured here."
             if s["method"] == "rseq" else ""),
          "- The unmodified server takes an uncontended per-thread mutex "
          "(two locked read-modify-writes and two calls) around each group "
          "of counter bumps.  With one key per request, the syscalls and "
          "libevent cost some microseconds per request and the stats "
          "path tens of nanoseconds, so rr1key is expected to show no "
          "difference beyond the run-to-run noise; mget100 (100-key gets: "
          "two bumps per key) is the stats-heavy load.",
          "- Client and server share this machine's CPUs, and the machine "
          "may be shared with other jobs (see the load averages): wall "
          "time and req/s are noisy, server CPU time less so.",
          "- The patched binary's text is larger: "
          f"{s['text']['patched']} bytes against "
          f"{s['text']['unmodified']} (`size`'s text: code and read-only "
          "data), as the accessor's slow "
          "paths are inlined at each of the 87 sites.  `stats` sums "
          "about 800 fields over the possible CPUs under a lock: fine for "
          "a stats command, linear in possible CPUs.",
          "- Not covered: the proxy build (`--enable-proxy`), whose "
          "counters keep the mutex.", ""]
    return "\n".join(L)
