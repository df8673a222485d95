# SPDX-License-Identifier: GPL-2.0
"""make distro: Debian 12 with systemd, booted on the PDA kernels.

For each kind (a target naming a deb_kernel): a Debian root of its
architecture, made by mmdebstrap's unpack-only variant (extract: the
host runs no program of the guest's architecture, so this works where
i386 programs cannot run at all), cached per Debian architecture.  Its
first boot (tests/distro/firstboot.sh as init) installs every unpacked
package with the guest's own dpkg, then make deb's packages of the kind
with dpkg -i.  That installed disk is cached; each run boots a copy of it
with systemd, and tests/distro/check.sh, a systemd service, writes what it
finds to the disk (read back with debugfs, which needs no mount):

  installed the library installed, not preloaded; the check turns it
            on for the next boot (the README's command)
  on        the library preloaded into every program; Debian's suites
  again     the same system once more: it must come up the same; the
            check turns the library off (the README's other command)
  off       without it; the check turns it on again
  mainline  the same disk on the unpatched kernel, library on; the
            suites again, to compare with "on"

Each boot is QEMU with DISTRO_CPUS CPUs and the disk on virtio-blk;
the PDA kernel booted is the one the linux-image package installed in
/boot (dumped from the disk).
"""

import hashlib
import json
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from . import check, deb, fullstate, kbuild, ktap, source
from .paths import BUILD, CACHE, LOGS, REPO
from .progress import Phase, StepFailed, fail, reset_log, run, say
from .targets import TARGETS

DISTRO = CACHE / "distro"
LOG_DIR = LOGS / "distro"
GUEST = REPO / "tests/distro"
MAINLINE_BUILD = BUILD / "distro-mainline"
SUITE, MIRROR = "bookworm", "http://deb.debian.org/debian"
# Beyond Debian's Essential and required packages: the system (systemd
# as init, udev, apt), Python (which asks for its CPU number in
# tests/distro/cpu_check.py) and the suites' packages.
PACKAGES = ("systemd", "systemd-sysv", "udev", "apt", "python3",
            "libpython3.11-testsuite", "systemd-tests")
# On a root with a foreign architecture added (the arch record's
# distro_foreign): that architecture's Python standard library, installed
# as its own packages (Multi-Arch: same); its interpreter's package
# (python3.11-minimal: one architecture's at a time) is unpacked beside
# the native one under /opt/python3.11-minimal-ARCH by the first boot.
FOREIGN_PACKAGES = ("libpython3.11-stdlib", "libexpat1", "zlib1g")
FOREIGN_UNPACKED = "python3.11-minimal"
DISTRO_CPUS = 4
MEMORY = "2G"
IMAGE_SIZE = "6G"
# Under TCG on two host cores: the first boot configures ~130 packages.
FIRSTBOOT_TIMEOUT = 60 * 60
BOOT_TIMEOUT = 30 * 60
SUITES_TIMEOUT = 150 * 60
LIBRARY, SONAME = "libpda-getcpu1", "libpda-getcpu.so.1"
SPLATS = REPO / "tests/guest/lib/klog.h"

# The boots of a run: label, which kernel, kernel arguments for the
# check, whether the suites run.
BOOTS = (("installed", "pda", "pda_distro.next=on", False),
         ("on", "pda", "", True),
         ("again", "pda", "pda_distro.next=off", False),
         ("off", "pda", "pda_distro.next=on", False),
         ("mainline", "mainline", "", True))
UNLOADED = ("installed", "off")


def kinds():
    return [t for t in TARGETS.values() if t.deb_kernel]


def splat_patterns():
    """klog.h's table, the one list of what a kernel splat looks like:
    (pattern, unless) pairs."""
    return re.findall(r'\{ "([^"]+)"(?:, "([^"]+)")? \}',
                      SPLATS.read_text())


def splats(text):
    pats = splat_patterns()
    return [ln for ln in text.splitlines()
            if any(p in ln and not (u and u in ln) for p, u in pats)]


def root(arch, log):
    """A Debian 12 root of @arch, unpacked, not installed; cached."""
    home = DISTRO / "roots" / arch.deb_arch
    done = home / "mmdebstrap.cmd"
    cmd = ["mmdebstrap", "--mode=root", "--variant=extract",
           "--architectures=" + ",".join(
               filter(None, (arch.deb_arch, arch.distro_foreign))),
           "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
           # @arch's own: a foreign one's Essential set would conflict
           # with it.
           f"--include=?and(?essential,?architecture({arch.deb_arch}))",
           f"--include=?and(?priority(required),"
           f"?architecture({arch.deb_arch}))",
           "--include=" + ",".join(PACKAGES + tuple(
               f"{p}:{arch.distro_foreign}" for p in FOREIGN_PACKAGES
               if arch.distro_foreign))]
    if arch.distro_foreign:
        cmd.append(f'--extract-hook=mkdir -p "$1/pda/unpack" && '
                   f'cd "$1/pda/unpack" && '
                   f'APT_CONFIG="$MMDEBSTRAP_APT_CONFIG" apt-get download '
                   f'{FOREIGN_UNPACKED}:{arch.distro_foreign}')
    cmd += ["--skip=cleanup/apt/cache", SUITE, home / "root", MIRROR]
    key = " ".join(map(str, cmd))
    if done.exists() and done.read_text() == key:
        return home / "root"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    with Phase(f"distro {arch.deb_arch}", "mmdebstrap (unpack only)", log):
        run(cmd, log, what="mmdebstrap")
    done.write_text(key)
    return home / "root"


def packages(target, log):
    """make deb's packages a kind installs: its kernel's linux-image and
    the library for its architecture and the foreign one."""
    out = DISTRO / target.name / "debs"
    shutil.rmtree(out, ignore_errors=True)
    arches = [target.arch] + [a for a in deb.ARCHES.values()
                              if a.deb_arch == target.arch.distro_foreign]
    changes = deb.library_packages(out, arches, LOG_DIR)
    changes += deb.kernel_packages(out, [target.arch], LOG_DIR,
                                   names=(target.name,))
    made = deb.lint(changes, LOG_DIR)
    chosen = [p for p in made if p.name == LIBRARY or
              p.name.startswith("linux-image-") and
              not p.name.endswith("-dbg")]
    return made, chosen


def kernel_release(made):
    for p in made:
        if p.name.startswith("linux-image-") and \
                not p.name.endswith("-dbg"):
            return p.name.removeprefix("linux-image-")
    raise StepFailed("distro: no linux-image package was built")


def debugfs(image, request, log):
    run(["debugfs", "-R", request, image], log, what=f"debugfs {request}")


def cached(image, key):
    stamp = Path(f"{image}.key")
    return image.exists() and stamp.exists() and stamp.read_text() == key


def fsck(image, log, clean=True):
    """e2fsck after every boot, before debugfs reads or writes the disk:
    debugfs does not replay the journal, and the kernel would replay it
    over what debugfs wrote.  A systemd boot powers off with / unmounted:
    the check must find nothing (@clean).  A first boot leaves the
    journal to replay and orphans to clear: its PID 1 still runs the dash
    and C library that dpkg replaced, deleted files that keep / from
    going read-only; e2fsck repairs that (exit 1), then a second check
    must find nothing."""
    with open(log, "a") as out:
        if not clean:
            rc = subprocess.call(["e2fsck", "-fy", image], stdout=out,
                                 stderr=subprocess.STDOUT)
            if rc not in (0, 1):
                fail(f"e2fsck -fy {image}: exit {rc}", log)
        rc = subprocess.call(["e2fsck", "-fn", image], stdout=out,
                             stderr=subprocess.STDOUT)
    if rc != 0:
        fail(f"e2fsck -fn {image}: the file system has errors (exit {rc})",
             log)


def first_boot(target, image, name, what, log):
    """Boots @image with tests/distro/firstboot.sh as init, on the kind's
    packaged kernel as built (its boot image: the package is not in the
    disk yet)."""
    console = LOG_DIR / f"{target.name}-firstboot-{name}.console"
    kernel = deb.KERNEL_BUILD / target.name / "build" / \
        target.arch.boot_image
    with Phase(f"distro {target.name}", f"first boot: {what}", console):
        boot(target, image, kernel, "init=/pda/firstboot.sh", console,
             FIRSTBOOT_TIMEOUT)
    text = console.read_text(errors="replace")
    if "pda-firstboot: done" not in text or "pda-firstboot: FAILED" in text:
        fail(f"distro {target.name}: the first boot failed", console)
    fsck(image, log, clean=False)


def configured(target, log):
    """The Debian root of the kind's architecture as a disk whose every
    package the guest's dpkg installed; cached per architecture, while
    the root and firstboot.sh are the same."""
    base = root(target.arch, log)
    image = DISTRO / "roots" / target.arch.deb_arch / "configured.img"
    key = hashlib.sha256((base.parent / "mmdebstrap.cmd").read_bytes() +
                         (GUEST / "firstboot.sh").read_bytes()).hexdigest()
    if cached(image, key):
        return image, key
    stage = image.parent / "stage"
    shutil.rmtree(stage, ignore_errors=True)
    image.unlink(missing_ok=True)
    # Hard links: the root's files are never written, only the image is.
    run(["cp", "-al", base, stage], log, what="stage the root")
    (stage / "pda/debs").mkdir(parents=True)
    for f in GUEST.iterdir():
        shutil.copy(f, stage / "pda" / f.name)
    run(["mkfs.ext4", "-q", "-F", "-L", "pda-root", "-d", stage,
         image, IMAGE_SIZE], log, what="mkfs.ext4 -d")
    shutil.rmtree(stage)
    first_boot(target, image, "configure",
               "dpkg installs every package", log)
    Path(f"{image}.key").write_text(key)
    return image, key


def installed(target, chosen, log):
    """The kind's disk: a copy of the configured one, tests/distro's
    files written into /pda, and @chosen installed by dpkg -i in the
    guest; cached while all of those are the same."""
    base, key = configured(target, log)
    image = DISTRO / target.name / "installed.img"
    digest = hashlib.sha256(key.encode())
    for p in sorted(chosen, key=lambda p: p.path.name):
        digest.update(p.path.read_bytes())
    for f in sorted(GUEST.iterdir()):
        digest.update(f.read_bytes())
    if cached(image, digest.hexdigest()):
        return image
    image.parent.mkdir(parents=True, exist_ok=True)
    run(["cp", "--sparse=always", base, image], log, what="copy the disk")
    # debugfs writes into the unmounted file system; write never
    # replaces a file, so each goes first.
    script = image.parent / "debugfs.cmd"
    cmds = [f"rm /pda/{f.name}\nwrite {f} /pda/{f.name}"
            for f in sorted(GUEST.iterdir())]
    cmds += [f"write {p.path} /pda/debs/{p.path.name}" for p in chosen]
    script.write_text("\n".join(cmds) + "\n")
    run(["debugfs", "-w", "-f", script, image], log,
        what="debugfs: the packages and checks into the disk")
    first_boot(target, image, "install", "dpkg -i the PDA packages", log)
    listing = subprocess.run(["debugfs", "-R", "ls -l /boot", image],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout
    kernel = f"vmlinuz-{kernel_release(chosen)}"
    if kernel not in listing:
        fail(f"distro {target.name}: no /boot/{kernel} after the install "
             "boot: did dpkg -i install linux-image?", log)
    Path(f"{image}.key").write_text(digest.hexdigest())
    return image


def qemu_cmd(target, image, kernel, append):
    arch = target.arch
    return [arch.qemu, "-M", arch.distro_machine or arch.machine,
            "-cpu", target.qemu_cpu,
            "-accel", "tcg", "-smp", str(DISTRO_CPUS), "-m", MEMORY,
            "-nographic", "-no-reboot", "-kernel", str(kernel),
            "-drive", f"file={image},format=raw,if=virtio",
            "-append", f"console={arch.console} root=/dev/vda rw panic=-1 "
            f"{append}"]


def boot(target, image, kernel, append, console, timeout):
    """One boot until the guest powers off; StepFailed on a timeout."""
    cmd = qemu_cmd(target, image, kernel, append)
    Path(str(console) + ".cmd").write_text(" ".join(cmd) + "\n")
    with open(console, "wb") as out:
        try:
            subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out,
                           stderr=subprocess.STDOUT, timeout=timeout,
                           check=False)
        except subprocess.TimeoutExpired:
            fail(f"distro {target.name}: no power-off in {timeout}s",
                 console)


def mainline_kernel(target, pristine, log):
    """make bench's unpatched 6.12 (the pristine tree) with the kind's
    packaged config: the same kernel but for the series."""
    bdir = MAINLINE_BUILD / target.name
    bdir.mkdir(parents=True, exist_ok=True)
    config = (deb.KERNEL_BUILD / target.name / "build/.config").read_text()
    config = config.replace(f'CONFIG_LOCALVERSION="{target.deb_kernel}"',
                            'CONFIG_LOCALVERSION="-mainline"')
    dot = bdir / ".config"
    if not dot.exists() or dot.read_text() != config:
        dot.write_text(config)
    with Phase(f"distro {target.name}", "mainline kernel", log):
        run(kbuild.make_cmd(target, pristine, bdir, "olddefconfig"), log,
            env=kbuild.make_env(), what="make olddefconfig")
        kbuild.build(target, pristine, bdir, log)
    return bdir / target.arch.boot_image


def results(target, image, label, log):
    """What check.sh wrote on the disk in the boot @label."""
    dest = DISTRO / target.name / "out" / label
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    debugfs(image, f"rdump /pda/out/{label} {dest.parent}", log)
    result = dest / "result"
    return dest, findings(result.read_text() if result.exists() else "")


def findings(text):
    """check.sh's "key value..." lines as {key: [value, ...]}."""
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        found.setdefault(key, []).append(value)
    return found


def python_results(xml):
    """{test id: pass|fail|skip} from regrtest's JUnit file (Python's
    test.support.testresult: a testcase named by the test's id, with a
    failure, error or skipped element, or none)."""
    out = {}
    if not xml.exists():
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name")
        if case.find("failure") is not None or \
                case.find("error") is not None:
            out[name] = "fail"
        elif case.find("skipped") is not None:
            out[name] = "skip"
        else:
            out[name] = "pass"
    return out


def systemd_results(log):
    """{test: pass|fail|skip} from run-unit-tests.py's PASS:/SKIP:/FAIL:
    lines."""
    out = {}
    if not log.exists():
        return out
    for m in re.finditer(r"^(?:\x1b\[[0-9;]*m)?(PASS|SKIP|FAIL): (\S+?)"
                         r"(?:\x1b\[[0-9;]*m)?$",
                         log.read_text(errors="replace"), re.M):
        out[m.group(2)] = m.group(1).lower()
    return out


SUITE_READERS = {"python": lambda d: python_results(d / "python.xml"),
                 "systemd": lambda d: systemd_results(d / "systemd.log")}


def online_cpus(config):
    """How many CPUs a kernel of .config text @config brings up in a
    guest of DISTRO_CPUS: all of them, but 1 on a UP kernel."""
    return DISTRO_CPUS if "\nCONFIG_SMP=y\n" in config else 1


def again_same(first, second):
    """The second boot with the library on (@second, findings) must come
    up as the first (@first): the same state, failed units, maps and
    method."""
    differ = [k for k in ("state", "failed", "maps", "method")
              if first.get(k) != second.get(k)]
    return ktap.Result("again_same", "fail" if differ else "pass",
                       "the second boot differs in " + ", ".join(differ)
                       if differ else "")


def check_boot(target, label, kernel, found, out_dir, console, cpus):
    """The results of one boot as make check's rows read them: @kernel
    its release, @cpus how many CPUs it brings up."""
    r = []

    def add(name, ok, detail=""):
        r.append(ktap.Result(f"{label}:{name}", "pass" if ok else "fail",
                             detail))
    preloaded = label not in UNLOADED
    add("kernel", found.get("kernel") == [kernel], str(found.get("kernel")))
    add("running", found.get("state") == ["running"],
        f"systemctl is-system-running: {found.get('state')}")
    add("no_failed_unit", not found.get("failed"),
        " ".join(found.get("failed", [])))
    journal = out_dir / "journal.txt"
    bad = splats(Path(console).read_text(errors="replace")) + \
        splats(journal.read_text(errors="replace") if journal.exists()
               else "")
    add("no_splat", not bad, "; ".join(bad[:3]))
    want = "mapped" if preloaded else "not-mapped"
    for line in found.get("maps", []) or ["(none) no-record"]:
        prog, state = line.split()
        add(f"maps_{prog}", state == want, f"{state}, want {want}")
    # cpu_check.py, in each Python: native, and 32-bit beside a 64-bit
    # one.
    bits = {str(target.arch.bits)} | ({"32"} if target.arch.distro_foreign
                                      else set())
    for b in sorted(bits):
        checked = [ln.split()[1:] for ln in found.get("cpu", [])
                   if ln.split()[0] == b]
        add(f"cpu{b}_every_cpu", len(checked) == cpus,
            f"{len(checked)} CPUs checked, want {cpus}")
        for cpu, got in checked:
            add(f"cpu{b}_{cpu}", cpu == got, f"pinned to {cpu}: {got}")
        provider = [ln.split()[1] for ln in found.get("provider", [])
                    if ln.split()[0] == b]
        want = SONAME if preloaded else "libc.so.6"
        add(f"provider{b}", [Path(p).name for p in provider] == [want],
            f"{provider}, want {want}")
        method = [ln.split()[1] for ln in found.get("method", [])
                  if ln.split()[0] == b]
        want = ("no-library" if not preloaded else
                "rseq" if label == "mainline" else
                target.arch.preload_method)
        add(f"method{b}", method == [want], f"{method}, want {want}")
    add("cpu_check_ran", not found.get("cpu_check_failed"),
        " ".join(found.get("cpu_check_failed", [])))
    if "python_modules" in found:
        # Every module and every unit test reported: one that crashed or
        # timed out on both kernels writes nothing to compare.
        ran = {t.split(".")[1] for t in python_results(
            out_dir / "python.xml")}
        want = found["python_modules"][0].split()
        add("suite_python_complete", set(want) <= ran,
            "no results from " + " ".join(sorted(set(want) - ran)))
        units = len(systemd_results(out_dir / "systemd.log"))
        want = (found.get("systemd_tests") or ["?"])[0]
        add("suite_systemd_complete", str(units) == want,
            f"{units} results of {want} tests")
    add("checks_done", "done" in found, "check.sh did not finish")
    return r


def compare_suites(target, on, mainline):
    """Each suite's results with the library on, PDA kernel against
    mainline: the same test must end the same way on both."""
    r, counts = [], {}
    for suite, read in SUITE_READERS.items():
        a, b = read(on), read(mainline)
        counts[suite] = {k: {s: list(v.values()).count(s)
                             for s in ("pass", "fail", "skip")}
                         for k, v in (("pda", a), ("mainline", b))}
        differ = sorted(t for t in set(a) | set(b) if a.get(t) != b.get(t))
        counts[suite]["differ"] = [f"{t}: pda {a.get(t, 'absent')}, "
                                   f"mainline {b.get(t, 'absent')}"
                                   for t in differ]
        counts[suite]["both_fail"] = sorted(
            t for t in a if a[t] == "fail" and b.get(t) == "fail")
        counts[suite]["both_skip"] = sorted(
            t for t in a if a[t] == "skip" and b.get(t) == "skip")
        r.append(ktap.Result(
            f"suite_{suite}_same", "pass" if a and not differ else "fail",
            "; ".join(counts[suite]["differ"][:5]) or
            ("" if a else "no results")))
    return r, counts


def run_kind(target, log):
    """Packages, installed disk, the boots of BOOTS: (Report, state)."""
    pristine, _ = check.patched_tree()
    made, chosen = packages(target, log)
    release = kernel_release(made)
    image = installed(target, chosen, log)
    work = DISTRO / target.name / "run.img"
    run(["cp", "--sparse=always", image, work], log, what="copy the disk")
    kernels = {"pda": DISTRO / target.name / f"vmlinuz-{release}",
               "mainline": mainline_kernel(target, pristine, log)}
    kernels["pda"].unlink(missing_ok=True)
    debugfs(work, f"dump /boot/vmlinuz-{release} {kernels['pda']}", log)
    if not kernels["pda"].exists():
        fail(f"distro {target.name}: no /boot/vmlinuz-{release} in the "
             "disk: did dpkg -i install linux-image?", log)
    releases = {"pda": release,
                "mainline": f"{source.kernel_version(pristine)}-mainline"}
    append = " ".join(w for w in target.append.split()
                      if not w.startswith("pda."))
    cpus = online_cpus((deb.KERNEL_BUILD / target.name /
                        "build/.config").read_text())
    rep, boots, dirs = ktap.Report(), {}, {}
    for label, which, args, suites in BOOTS:
        console = LOG_DIR / f"{target.name}-{label}.console"
        started = time.monotonic()
        with Phase(f"distro {target.name}", f"boot {label} ({which} "
                   f"kernel{', suites' if suites else ''})", console):
            boot(target, work, kernels[which],
                 f"{append} pda_distro.label={label} {args}"
                 f"{' pda_distro.suites=1' if suites else ''}",
                 console, SUITES_TIMEOUT if suites else BOOT_TIMEOUT)
        fsck(work, log)
        dirs[label], found = results(target, work, label, log)
        rep.results += check_boot(target, label, releases[which], found,
                                  dirs[label], console, cpus)
        boots[label] = {"found": found, "minutes": round(
            (time.monotonic() - started) / 60, 1)}
    rep.results.append(again_same(boots["on"]["found"],
                                  boots["again"]["found"]))
    suite_rows, counts = compare_suites(target, dirs["on"], dirs["mainline"])
    rep.results += suite_rows
    rep.done = True
    state = {"kind": target.name, "commit": fullstate.commit(), "date":
             time.strftime("%Y-%m-%d"), "cpus": cpus,
             "packages": [{"name": p.name, "version": p.version,
                           "arch": p.arch, "lintian": p.verdict()}
                          for p in made],
             "boots": boots, "suites": counts,
             "passed": rep.count("pass"), "failed": rep.count("fail"),
             "failures": [f"{x.name}: {x.detail}" for x in rep.results
                          if x.status == "fail"]}
    (DISTRO / target.name / "state.json").write_text(
        json.dumps(state, indent=1) + "\n")
    return rep, state


def rows(names=None):
    """make check-full's rows: (kind, label, outcome, rep, where)."""
    out = []
    for target in kinds():
        if names and target.name not in names:
            continue
        log = reset_log(LOG_DIR / f"{target.name}.log")
        label = f"{target.name}-distro"
        try:
            rep, state = run_kind(target, log)
        # A malformed finding (a cut-short JUnit file, a line with a
        # field missing) fails this kind, not the whole run.
        except Exception as e:  # noqa: BLE001
            say(f"ERROR [{label}]: {e!r}")
            out.append((target.name, label, "fail", None,
                        (repr(e).splitlines() or ["?"])[0]))
            continue
        outcome = "pass" if not rep.count("fail") else "fail"
        out.append((target.name, label, outcome, rep,
                    f"tcg, {state['cpus']} of {DISTRO_CPUS} CPUs up, "
                    f"{log}"))
    write_report()
    return out


REPORT = REPO / "results/DISTRO.md"
HEAD = """\
# Debian 12 on the PDA kernels (`make distro`)

Written by `make distro` (`make check-full PART=distro`) from each kind's
latest run.  Each kind: a Debian 12 root made by mmdebstrap's unpack-only
variant, installed by its own dpkg on the first boot, then `dpkg -i` of
make deb's packages in the guest; QEMU (TCG) with {cpus} CPUs and the disk
on virtio-blk, systemd as init.  Boots: `installed` (the library installed,
not preloaded), `on` (in /etc/ld.so.preload: every program), `again` (the
same system once more, which then turns it off), `off`, `mainline` (the same
disk on the unpatched 6.12 kernel with the same config, the library on).
The boot column is systemd-analyze's own account in the guest, and the
minutes per boot are wall-clock time, both under TCG on the machine that
ran it: how long the run took, not a measure of the kernels.
"""


def write_report():
    states = []
    for target in kinds():
        path = DISTRO / target.name / "state.json"
        if path.exists():
            states.append(json.loads(path.read_text()))
    lines = [HEAD.format(cpus=DISTRO_CPUS)]
    lines += ["| kind | commit | date | checks passed | failed | boot "
              "`on`: systemd-analyze | units | failed units |",
              "|---|---|---|---:|---:|---|---:|---|"]
    for s in states:
        on = s["boots"]["on"]["found"]
        lines.append(
            f"| {s['kind']} | {s['commit']} | {s['date']} | {s['passed']} "
            f"| {s['failed']} | {' '.join(on.get('boot', ['?']))} | "
            f"{' '.join(on.get('units', ['?']))} | "
            f"{', '.join(on.get('failed', [])) or 'none'} |")
    for s in states:
        lines += ["", f"## {s['kind']}", "", "| package | version | arch "
                  "| lintian |", "|---|---|---|---|"]
        lines += [f"| {p['name']} | {p['version']} | {p['arch']} | "
                  f"{p['lintian']} |" for p in s["packages"]]
        lines += ["", "| suite | PDA pass/fail/skip | mainline "
                  "pass/fail/skip | differ |", "|---|---|---|---|"]
        for suite, c in s["suites"].items():
            fmt = "/".join(str(c['pda'][k]) for k in ("pass", "fail",
                                                      "skip"))
            fmt_m = "/".join(str(c['mainline'][k]) for k in ("pass", "fail",
                                                             "skip"))
            lines.append(f"| {suite} | {fmt} | {fmt_m} | "
                         f"{len(c['differ'])} |")
        on = s["boots"]["on"]["found"]
        lines += ["", "Python's modules: " + " ".join(
            on.get("python_modules", ["?"])) + ".  Minutes per boot "
            "(TCG, the suites in `on` and `mainline`): " + ", ".join(
                f"{label} {b['minutes']}" for label, b in
                s["boots"].items()) + "."]
        for suite, c in s["suites"].items():
            for what in ("differ", "both_fail", "both_skip"):
                if c[what]:
                    lines += ["", f"{suite}, {what.replace('_', ' ')}: "
                              + ", ".join(c[what])]
        if s["failures"]:
            lines += ["", "Failed checks: " + "; ".join(s["failures"])]
    REPORT.write_text("\n".join(lines) + "\n")


def main(names=None):
    started = time.monotonic()
    lacks = [p for p in ("mmdebstrap", "debugfs", "mkfs.ext4")
             if not shutil.which(p)]
    if lacks:
        raise StepFailed("distro: this host lacks " + ", ".join(lacks))
    out = rows(names)
    return check.summary([r[1:] for r in out], started)
