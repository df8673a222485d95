# SPDX-License-Identifier: GPL-2.0
"""Boot a kernel + initramfs in QEMU or Bochs and classify the outcome."""

import os
import re
import subprocess
import threading
import time
import tty
from pathlib import Path

from . import guestout, ktap, testclock
from .progress import say

PASS, FAIL, PANIC, TIMEOUT, NORESULT = "pass", "fail", "panic", "timeout", \
    "no-result"
# Exit status of `make check` for each outcome (worst one wins).
EXIT = {PASS: 0, FAIL: 1, PANIC: 2, TIMEOUT: 3, NORESULT: 4}

PANIC_MARKS = ("Kernel panic - not syncing", "---[ end Kernel panic")

_kvm_works = {}


def qemu_cmd(target, image, initrd, append, accel, icount=False,
             qemu_args=()):
    cmd = [target.arch.qemu, "-M", target.machine or target.arch.machine,
           "-cpu",
           "host" if accel == "kvm" else target.qemu_cpu]
    if icount:
        cmd += ["-icount", "shift=0,sleep=off"]
    cmd += ["-accel", os.environ.get("PDA_ACCEL", accel), "-smp", str(target.cpus), "-m", target.memory,
            "-nographic", "-no-reboot", "-kernel", image, "-initrd", initrd,
            "-append", append]
    return [str(c) for c in cmd + list(qemu_args)]


def kernel_args(target, timeout, extra=""):
    return (f"console={target.arch.console} panic=-1 pda.cpus={target.cpus} "
            f"pda.timeout={timeout} {target.append} {extra}").strip()


def accel_for(target, image, initrd):
    """KVM only if a probe boot actually reaches user space under it."""
    if target.arch.no_kvm:
        return "tcg", target.arch.no_kvm
    if target.tcg:
        return "tcg", f"CPU model {target.qemu_cpu}"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg", "no usable /dev/kvm"
    if target.arch.name not in _kvm_works:
        cmd = qemu_cmd(target, image, initrd,
                       kernel_args(target, 1, "pda.probe"), "kvm")
        try:
            out = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=30).stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout or b""
        _kvm_works[target.arch.name] = b"Run /init as init process" in out
    if _kvm_works[target.arch.name]:
        return "kvm", "KVM probe reached user space"
    return "tcg", "KVM probe did not reach user space (32-bit guest " \
        "under this KVM faults)"


def _watch(cmd, console, timeout, stop_on_done=False, cwd=None):
    """Run cmd with output to console; returns True if it timed out."""
    with open(console, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, cwd=cwd,
                                start_new_session=True)
        deadline = time.monotonic() + timeout
        clock = testclock.TestClock(console)
        try:
            while proc.poll() is None:
                clock.poll()
                if time.monotonic() > deadline:
                    _kill(proc)
                    return True
                if stop_on_done and _finished(console):
                    time.sleep(1)
                    _kill(proc)
                    return False
                time.sleep(0.5)
        finally:
            clock.write()
    return False


def _kill(proc):
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass
    proc.wait()


def _finished(console):
    try:
        text = Path(console).read_text(errors="replace")
    except OSError:
        return False
    return ktap.DONE in text or any(m in text for m in PANIC_MARKS)


def classify(console, timed_out, target_name, packed=()):
    """(outcome, report) from a console log; @packed: the tests the
    initramfs holds, each of which must report."""
    text = Path(console).read_text(errors="replace")
    rep = ktap.apply_known(ktap.parse_console(text), target_name)
    rep = ktap.apply_skips(rep, text, target_name)
    rep.results += guestout.console_checks(text, rep)
    if rep.done:
        rep.results += ktap.missing_results(rep, packed)
    if ktap.UNPACK_FAILED in text:
        rep.results.append(ktap.Result(
            "initramfs_unpacked", "fail",
            f"the kernel said '{ktap.UNPACK_FAILED}'"))
    if any(m in text for m in PANIC_MARKS):
        return PANIC, rep
    if not rep.done:
        return (TIMEOUT if timed_out else NORESULT), rep
    if rep.count("fail"):
        return FAIL, rep
    return PASS, rep


def icount(target, bdir, cpio, console, timeout, args, qemu_args=()):
    """A make bench boot: TCG under -icount shift=0, the kernel built in
    bdir, kernel arguments args on top of the harness's own."""
    return qemu(target, Path(bdir) / target.arch.boot_image, cpio, console,
                timeout, "tcg", kernel_args(target, timeout // 3, args),
                icount=True, qemu_args=qemu_args)


def qemu(target, image, initrd, console, timeout, accel, append,
         icount=False, qemu_args=()):
    cmd = qemu_cmd(target, image, initrd, append, accel, icount, qemu_args)
    Path(console).parent.mkdir(parents=True, exist_ok=True)
    Path(str(console) + ".cmd").write_text(" ".join(cmd) + "\n")
    timed_out = _watch(cmd, console, timeout)
    return classify(console, timed_out, target.name,
                    ktap.packed_tests(initrd))


BOCHSRC = """\
megs: 512
cpu: model={model}, count={count}, ips=200000000, reset_on_triple_fault=0
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/vgabios/vgabios.bin
ata0-master: type=cdrom, path={iso}, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev={serial}
display_library: term
log: {log}
panic: action=fatal
error: action=report
clock: sync=none, time0=local
"""


def bochs(iso, workdir, console, timeout, count, model, target_name="bochs",
          packed=()):
    """Boot the isolinux ISO in Bochs on CPU @model, @count of them (its
    count=); stop it after the final TAP line.  @packed: the tests its
    initramfs holds."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    rc = workdir / "bochsrc"
    rc.write_text(BOCHSRC.format(count=count, model=model, iso=iso,
                                 serial=console, log=workdir / "bochs.log"))
    cont = workdir / "continue.rc"
    cont.write_text("c\n")
    Path(console).unlink(missing_ok=True)
    # A previous run's tty log names a pty that is no longer Bochs's.
    (workdir / "bochs.tty").unlink(missing_ok=True)
    out = workdir / "bochs.out"
    # Debian's Bochs has no headless display library; "term" wants a
    # terminal, so script(1) gives it a pty whether or not we have one.
    cmd = ["script", "-qfec",
           f"bochs -q -f {rc} -rc {cont}", str(workdir / "bochs.tty")]
    (workdir / "bochs.cmd").write_text(" ".join(cmd) + "\n")
    with open(out, "wb") as sink:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sink,
                                stderr=subprocess.STDOUT, cwd=workdir,
                                start_new_session=True)
        deadline = time.monotonic() + timeout
        timed_out = False
        screen = None
        clock = testclock.TestClock(console)
        while proc.poll() is None:
            clock.poll()
            if screen is None:
                screen = _drain_screen(workdir / "bochs.tty")
            if _finished(console):
                time.sleep(1)
                break
            if time.monotonic() > deadline:
                timed_out = True
                break
            time.sleep(1)
        _kill(proc)
        clock.write()
    if not Path(console).exists():
        Path(console).write_text("")
    return classify(console, timed_out, target_name, packed)



def _drain_screen(tty_log):
    """Debian's Bochs has its debugger built in, so its term display draws
    the VGA screen on a pty of its own, which nobody reads.  Once that
    pty's buffer is full (after ~20 KiB of screen updates, some minutes
    into a run), Bochs blocks in write() and the guest stops.  Read and
    drop it.  Returns the thread, or None until Bochs has named the pty."""
    try:
        text = Path(tty_log).read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r'connected to screen "(/dev/pts/\d+)"', text)
    if not m:
        return None

    def drain(path):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOCTTY)
        except OSError:
            return
        try:
            # Raw: no echo back to Bochs (it would read it as keys), and
            # a ^D in the screen data is not an end of file.
            tty.setraw(fd)
            while True:
                os.read(fd, 4096)
        except OSError:
            pass            # Bochs closed it (EIO): the run is over
        finally:
            os.close(fd)

    t = threading.Thread(target=drain, args=(m.group(1),), daemon=True)
    t.start()
    return t


def describe(outcome, rep):
    return (f"{outcome}: {rep.count('pass')} passed, {rep.count('fail')} "
            f"failed, {rep.count('skip') + rep.count('xfail')} skipped")


def report_lines(rep, console):
    """Failures, known failures, and where the time went."""
    slow = testclock.slowest(console)
    if slow:
        say(f"    slowest (wall clock): {slow}; all in {console}.times")
    for r in rep.results:
        if r.status in ("fail", "xfail"):
            tag = "FAIL" if r.status == "fail" else "known failure"
            say(f"    {tag}: {r.name} {r.detail}")
