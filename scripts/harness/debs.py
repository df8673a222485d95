# SPDX-License-Identifier: GPL-2.0
"""Debian packages of the guests' architectures, unpacked in the cache.

The guests run a distribution library unmodified (liburcu, urcubench.py)
on i386, amd64, armhf and arm64.  This machine's dpkg knows one
architecture, and adding foreign ones (`dpkg --add-architecture`) would
change what every later `apt-get update` and `apt-get install` does on
the host, so nothing is installed: apt-get runs with a private state
under the cache (its own lists, archives and architectures; the host's
Debian sources, as `apt-get indextargets` names them, so whatever mirror
the host uses), `apt-get download` fetches each package for each
architecture and `dpkg -x` unpacks them into one root per architecture,
as the preload runs take the C library from the -cross and -i386
packages.

A root stays until the packages asked for change: later runs make no
network access.  Its stamp records each package's version, for reports.
"""

import contextlib
import fcntl
import shutil
import subprocess
from pathlib import Path

from .arches import ARCHES
from .paths import CACHE
from .progress import StepFailed, run

APT = CACHE / "apt"
DEBS = CACHE / "debs"
STAMP = ".packages"


def root(arch):
    """Where @arch's packages are unpacked (as if / of a Debian system)."""
    return DEBS / arch.deb_arch


def lib_dir(arch):
    return root(arch) / "usr/lib" / arch.multiarch


def include_dir(arch):
    """Debian's multiarch headers: a Multi-Arch: same -dev package puts
    them here (its config.h differs between architectures)."""
    return root(arch) / "usr/include" / arch.multiarch


def versions(arch):
    """{package: version} of what is unpacked for @arch."""
    stamp = root(arch) / STAMP
    if not stamp.exists():
        return {}
    return dict(line.split(" ", 1)
                for line in stamp.read_text().splitlines() if line)


@contextlib.contextmanager
def _lock():
    """One apt state, one user at a time: make check and make bench may
    both want it."""
    APT.mkdir(parents=True, exist_ok=True)
    with open(APT / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _sources():
    """deb lines of the host's Debian archives, for every architecture
    the guests run."""
    out = subprocess.run(
        ["apt-get", "indextargets", "--format",
         "$(REPO_URI) $(RELEASE) $(COMPONENT)",
         "Identifier: Packages", "Origin: Debian"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = sorted(set(out.stdout.split("\n"))) if not out.returncode else []
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise StepFailed("debs: the host's apt knows no Debian archive "
                         "(apt-get indextargets found none; run apt-get "
                         f"update first)\n{out.stdout}")
    archs = ",".join(sorted({a.deb_arch for a in ARCHES.values()}))
    return "".join(f"deb [arch={archs}] {ln}\n" for ln in lines)


def _config():
    """The private apt configuration; returns its path."""
    for d in ("lists/partial", "cache/archives/partial", "parts"):
        (APT / d).mkdir(parents=True, exist_ok=True)
    (APT / "sources.list").write_text(_sources())
    archs = " ".join(f'"{a}";' for a in
                     sorted({a.deb_arch for a in ARCHES.values()}))
    conf = APT / "apt.conf"
    conf.write_text("\n".join([
        f'Dir::Etc::SourceList "{APT / "sources.list"}";',
        f'Dir::Etc::SourceParts "{APT / "parts"}";',
        f'Dir::State::Lists "{APT / "lists"}";',
        f'Dir::Cache "{APT / "cache"}";',
        f"APT::Architectures {{ {archs} }};",
        # The lists and archives are root's, in root's cache: the
        # unprivileged _apt user could not write them.
        'APT::Sandbox::User "root";',
        'Acquire::Languages "none";', ""]))
    return conf


def _apt(conf, args, log, cwd=None):
    run(["apt-get", "-q", *args], log, cwd=cwd,
        env={"APT_CONFIG": str(conf), "DEBIAN_FRONTEND": "noninteractive"},
        what="apt-get " + " ".join(args[:2]))


def _download(conf, arch, packages, into, log):
    """apt-get download, with an update first if the lists are missing
    or do not have them."""
    names = [f"{p}:{arch.deb_arch}" for p in packages]
    if not any((APT / "lists").glob("*_Packages*")):
        _apt(conf, ["update"], log)
    try:
        _apt(conf, ["download", *names], log, cwd=into)
    except StepFailed:
        _apt(conf, ["update"], log)
        _apt(conf, ["download", *names], log, cwd=into)


def unpacked(arch, packages, log):
    """@arch's root with @packages (Debian names) unpacked in it."""
    want = sorted(packages)
    if sorted(versions(arch)) == want:
        return root(arch)
    with _lock():
        if sorted(versions(arch)) == want:
            return root(arch)
        conf = _config()
        work = APT / "download" / arch.deb_arch
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        _download(conf, arch, want, work, log)
        debs = sorted(work.glob("*.deb"))
        fresh = Path(str(root(arch)) + ".new")
        shutil.rmtree(fresh, ignore_errors=True)
        fresh.mkdir(parents=True)
        stamp = []
        for deb in debs:
            run(["dpkg-deb", "-x", deb, fresh], log, what=f"dpkg -x {deb}")
            info = subprocess.run(
                ["dpkg-deb", "-f", deb, "Package", "Version"],
                stdout=subprocess.PIPE, text=True, check=True).stdout
            fields = dict(ln.split(": ", 1) for ln in info.splitlines())
            stamp.append(f"{fields['Package']} {fields['Version']}")
        if sorted(s.split()[0] for s in stamp) != want:
            raise StepFailed(f"debs: {arch.deb_arch}: asked for {want}, "
                             f"got {stamp}\n  log: {log}")
        (fresh / STAMP).write_text("\n".join(sorted(stamp)) + "\n")
        shutil.rmtree(root(arch), ignore_errors=True)
        fresh.rename(root(arch))
        shutil.rmtree(work, ignore_errors=True)
    return root(arch)
