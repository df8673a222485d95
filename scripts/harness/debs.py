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

An Archive names the suites and the cache directories: HOST, the
host's own suites (liburcu), or another Debian release's from the same
mirrors (Debian 11's C library, for the preload runs), in apt state and
roots of its own, so the two never share lists or a root.  The private
apt reads an empty dpkg status: the host's installed versions, which
another release's archive lacks, never become the candidates.
"""

import contextlib
import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .arches import ARCHES
from .paths import CACHE
from .progress import StepFailed, run

STAMP = ".packages"


@dataclass(frozen=True)
class Archive:
    apt: Path           # the private apt state
    debs: Path          # the roots, one per architecture
    # The Debian release apt fetches from, by codename ("bullseye"), on
    # the host's mirrors; None: the host's own suites.
    codename: str = None
    # Source packages (deb-src lines, for apt-get source), not binaries.
    src: bool = False


HOST = Archive(CACHE / "apt", CACHE / "debs")


def root(arch, archive=HOST):
    """Where @arch's packages are unpacked (as if / of a Debian system)."""
    return archive.debs / arch.deb_arch


def lib_dir(arch, archive=HOST):
    return root(arch, archive) / "usr/lib" / arch.multiarch


def include_dir(arch, archive=HOST):
    """Debian's multiarch headers: a Multi-Arch: same -dev package puts
    them here (its config.h differs between architectures)."""
    return root(arch, archive) / "usr/include" / arch.multiarch


def versions(arch, archive=HOST):
    """{package: version} of what is unpacked for @arch."""
    stamp = root(arch, archive) / STAMP
    if not stamp.exists():
        return {}
    return dict(line.split(" ", 1)
                for line in stamp.read_text().splitlines() if line)


@contextlib.contextmanager
def lock(archive):
    """One apt state, one user at a time: make check and make bench may
    both want it."""
    archive.apt.mkdir(parents=True, exist_ok=True)
    with open(archive.apt / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _sources(codename=None, src=False):
    """deb lines of the host's Debian archives, for every architecture
    the guests run (deb-src lines if @src): the host's suites, or
    @codename's release suite (its last point release, main) on the
    mirrors of the host's own release suite.  Not its -updates or
    -security: bullseye-security no longer has armhf, and every
    architecture should get one version."""
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
    if codename is not None:
        lines = sorted({f"{uri} {codename} main"
                        for uri, rel, _ in (ln.split() for ln in lines)
                        if "-" not in rel})
    archs = ",".join(sorted({a.deb_arch for a in ARCHES.values()}))
    kind = "deb-src" if src else f"deb [arch={archs}]"
    return "".join(f"{kind} {ln}\n" for ln in lines)


def apt_config(archive):
    """The private apt configuration; returns its path."""
    apt = archive.apt
    for d in ("lists/partial", "cache/archives/partial", "parts"):
        (apt / d).mkdir(parents=True, exist_ok=True)
    (apt / "status").touch()
    (apt / "sources.list").write_text(_sources(archive.codename,
                                                  archive.src))
    archs = " ".join(f'"{a}";' for a in
                     sorted({a.deb_arch for a in ARCHES.values()}))
    conf = apt / "apt.conf"
    conf.write_text("\n".join([
        f'Dir::Etc::SourceList "{apt / "sources.list"}";',
        f'Dir::Etc::SourceParts "{apt / "parts"}";',
        f'Dir::State::Lists "{apt / "lists"}";',
        f'Dir::Cache "{apt / "cache"}";',
        # Nothing installed: the candidate is the archive's newest
        # version, not the host's installed one (which another
        # release's archive does not have).
        f'Dir::State::status "{apt / "status"}";',
        f"APT::Architectures {{ {archs} }};",
        # The lists and archives are root's, in root's cache: the
        # unprivileged _apt user could not write them.
        'APT::Sandbox::User "root";',
        'Acquire::Languages "none";', ""]))
    return conf


def apt(conf, args, log, cwd=None):
    run(["apt-get", "-q", *args], log, cwd=cwd,
        env={"APT_CONFIG": str(conf), "DEBIAN_FRONTEND": "noninteractive"},
        what="apt-get " + " ".join(args[:2]))


def _download(conf, arch, packages, into, log, archive):
    """apt-get download, with an update first if the lists are missing
    or do not have them."""
    names = [f"{p}:{arch.deb_arch}" for p in packages]
    if not any((archive.apt / "lists").glob("*_Packages*")):
        apt(conf, ["update"], log)
    try:
        apt(conf, ["download", *names], log, cwd=into)
    except StepFailed:
        apt(conf, ["update"], log)
        apt(conf, ["download", *names], log, cwd=into)


def _relative_links(top):
    """Each absolute symbolic link under @top made relative, so that it
    points into @top, as it would on the system @top stands for (libc6-dev's
    libdl.so -> /lib/i386-linux-gnu/libdl.so.2: a linker reading the root
    as its sysroot follows it)."""
    for link in Path(top).rglob("*"):
        if not link.is_symlink():
            continue
        target = os.readlink(link)
        if target.startswith("/"):
            link.unlink()
            link.symlink_to(os.path.relpath(Path(top) / target.lstrip("/"),
                                            link.parent))


def downloaded(arch, packages, into, log, archive=HOST):
    """@packages (Debian names) of @arch as .deb files in @into, which is
    emptied first: for a caller that needs a package's control files too
    (deb.py: libc6's symbols file, for dpkg-shlibdeps)."""
    into = Path(into)
    with lock(archive):
        conf = apt_config(archive)
        shutil.rmtree(into, ignore_errors=True)
        into.mkdir(parents=True)
        _download(conf, arch, sorted(packages), into, log, archive)
    return sorted(into.glob("*.deb"))


def unpacked(arch, packages, log, archive=HOST):
    """@arch's root with @packages (Debian names) unpacked in it."""
    want = sorted(packages)
    if sorted(versions(arch, archive)) == want:
        return root(arch, archive)
    with lock(archive):
        if sorted(versions(arch, archive)) == want:
            return root(arch, archive)
        conf = apt_config(archive)
        work = archive.apt / "download" / arch.deb_arch
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        _download(conf, arch, want, work, log, archive)
        debs = sorted(work.glob("*.deb"))
        fresh = Path(str(root(arch, archive)) + ".new")
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
        _relative_links(fresh)
        if sorted(s.split()[0] for s in stamp) != want:
            raise StepFailed(f"debs: {arch.deb_arch}: asked for {want}, "
                             f"got {stamp}\n  log: {log}")
        (fresh / STAMP).write_text("\n".join(sorted(stamp)) + "\n")
        shutil.rmtree(root(arch, archive), ignore_errors=True)
        fresh.rename(root(arch, archive))
        shutil.rmtree(work, ignore_errors=True)
    return root(arch, archive)
