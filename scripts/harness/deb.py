# SPDX-License-Identifier: GPL-2.0
"""make deb: Debian packages, built with dpkg-buildpackage and checked
with lintian, into one folder of the cache (OUT).

The preload library and pda.h (debian/ at the top of the checkout:
libpda-getcpu1, libpda-getcpu-dev) for every architecture of arches.py,
cross-built on this x86-64 host; and the PDA kernel of each target that
names a deb_kernel (targets.py), packaged by Kbuild's make bindeb-pkg
from the target's config plus configs/distro.config and its arch
record's distro_options: what a Debian system booted with systemd needs.
Each library build runs in a copy of the checkout's files (what git
tracks, and new files it does not ignore, as they are in the working
tree), so neither the checkout nor its debian/ ever holds a build
product; the kernels build in the patched tree, out of tree
(KERNEL_BUILD).

Cross builds need no foreign architecture in the host's dpkg: the
triplet's compiler and C library come from the -cross packages
(scripts/packages.txt), and dpkg-shlibdeps reads the architecture's own
libc6 (its libc.so.6 and symbols file) from a copy of its .deb fetched
into the cache by debs.py's private apt (libc6_tree(); debian/rules'
PDA_LIBC6_TREE).  The first run fetches it; later ones make no network
access.
"""

import filecmp
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import check, debs, kbuild, source
from .arches import ARCHES, HOST
from .paths import BUILD, CACHE, LOGS, REPO
from .progress import Phase, StepFailed, fail, reset_log, run, say
from .targets import TARGETS

OUT = CACHE / "deb"
# Where the kernel packages are built: Kbuild's bindeb-pkg writes them
# beside its output directory, so each build directory has this one to
# itself.
KERNEL_BUILD = BUILD / "deb-kernel"
# libc6 of each architecture, as dpkg-shlibdeps reads a package build
# tree: DEBIAN/symbols beside usr/lib/<multiarch>/libc.so.6.
LIBC6_TREES = CACHE / "deb-libc6"
LOG_DIR = LOGS / "deb"

# The host programs a build needs, and the Debian package of each.
TOOLS = {"dpkg-buildpackage": "dpkg-dev", "dh": "debhelper",
         "lintian": "lintian", "readelf": "binutils"}
# lintian's tag lines: "W: libpda-getcpu1: tag-name details", or for the
# upload's files "W: pda changes: ..."; a package may carry ":arch".
LINTIAN_TAG = re.compile(r"^([EW]): ([^\s:]+)(?::\S+)?(?: \w+)?: (\S+)")


@dataclass
class Package:
    """One .deb of a build, and what lintian said of it."""
    name: str
    version: str
    arch: str
    path: Path
    tags: list          # lintian's E: and W: lines of it

    def verdict(self):
        if not self.tags:
            return "lintian clean"
        kinds = [t.split(":")[0] for t in self.tags]
        return (f"lintian: {kinds.count('E')} error(s), "
                f"{kinds.count('W')} warning(s)")


def triplet_compiler(arch):
    """The C compiler dpkg-buildpackage -a @arch builds with
    (debian/rules: DEB_HOST_GNU_TYPE-gcc)."""
    triplet = subprocess.run(
        ["dpkg-architecture", "-a", arch.deb_arch, "-qDEB_HOST_GNU_TYPE"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True).stdout.strip()
    return f"{triplet}-gcc" if triplet else None


def missing(arches):
    """What this host lacks to build for @arches: [(program, package)]."""
    lacks = [(t, p) for t, p in TOOLS.items() if not shutil.which(t)]
    if not shutil.which("dpkg-architecture"):
        return lacks
    for arch in arches:
        cc = triplet_compiler(arch)
        if not cc or not shutil.which(cc):
            lacks.append((cc or f"{arch.deb_arch}'s compiler",
                          "gcc-" + (cc or "?-gcc")[:-len("-gcc")]))
    return lacks


def libc6_tree(arch, log):
    """@arch's libc6 unpacked as a package build tree (dpkg-deb -R),
    fetched once."""
    tree = LIBC6_TREES / arch.deb_arch
    if (tree / "DEBIAN/symbols").exists():
        return tree
    work = LIBC6_TREES / f"{arch.deb_arch}.download"
    deb = debs.downloaded(arch, ["libc6"], work, log)
    if len(deb) != 1:
        fail(f"deb: libc6 for {arch.deb_arch}: got {deb}", log)
    fresh = Path(f"{tree}.new")
    shutil.rmtree(fresh, ignore_errors=True)
    run(["dpkg-deb", "-R", deb[0], fresh], log, what="dpkg-deb -R libc6")
    shutil.rmtree(tree, ignore_errors=True)
    fresh.rename(tree)
    shutil.rmtree(work, ignore_errors=True)
    return tree


def source_copy(into):
    """The checkout's files, as they are in the working tree, copied to
    @into: what git tracks (minus what was deleted) and new files it does
    not ignore, so tools/preload/build and the like stay behind."""
    names = subprocess.run(
        ["git", "-C", REPO, "ls-files", "-z", "--cached", "--others",
         "--exclude-standard"], stdout=subprocess.PIPE, check=True,
        text=True).stdout
    for name in sorted(set(filter(None, names.split("\0")))):
        src = REPO / name
        if not (src.exists() or src.is_symlink()):
            continue
        dst = Path(into) / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    return Path(into)


def changes_files(changes):
    """The files a .changes lists (its Files: field), by path."""
    files, in_files = [], False
    for line in Path(changes).read_text().splitlines():
        if not line.startswith(" "):
            in_files = line.startswith("Files:")
            continue
        if in_files:
            files.append(Path(changes).parent / line.split()[-1])
    return files


def move_upload(found, out, what, log):
    """The one .changes among @found, and the files it lists, moved into
    @out; returns its new path.  A file another upload already put there
    must be the same bytes."""
    made = sorted(found)
    if len(made) != 1:
        fail(f"deb: {what}: not one .changes but {made}", log)
    for path in [made[0], *changes_files(made[0])]:
        dest = Path(out) / path.name
        if dest.exists() and not filecmp.cmp(path, dest, shallow=False):
            fail(f"deb: {what}: {path.name} differs from the one another "
                 f"build put in {out}", log)
        shutil.move(str(path), dest)
    return Path(out) / made[0].name


def library_packages(out, arches, log_dir=LOG_DIR):
    """debian/'s packages for each of @arches, built into @out (logs in
    @log_dir); returns their .changes files."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    changes = []
    with tempfile.TemporaryDirectory(prefix="pda-deb-") as tmp:
        src = source_copy(Path(tmp) / "src")
        for arch in arches:
            log = reset_log(Path(log_dir) / f"{arch.deb_arch}.log")
            with Phase(f"deb {arch.deb_arch}", "libc6 for dpkg-shlibdeps",
                       log):
                tree = libc6_tree(arch, log)
            with Phase(f"deb {arch.deb_arch}", "dpkg-buildpackage", log):
                run(["dpkg-buildpackage", "-a", arch.deb_arch, "-b", "-us",
                     "-uc"], log, cwd=src,
                    env={"PDA_LIBC6_TREE": str(tree),
                         "DEB_BUILD_OPTIONS": "nocheck"},
                    what=f"dpkg-buildpackage -a {arch.deb_arch}")
            changes.append(move_upload(
                Path(tmp).glob(f"*_{arch.deb_arch}.changes"), out,
                arch.deb_arch, log))
    return changes


def kernel_fragment(target, path):
    """@target's distribution options beyond configs/distro.config: its
    arch record's distro_options, and the LOCALVERSION that names its
    packages (linux-image-<version><deb_kernel>)."""
    lines = [f"CONFIG_LOCALVERSION=\"{target.deb_kernel}\"",
             "# CONFIG_LOCALVERSION_AUTO is not set"]
    lines += [f"CONFIG_{o}" for o in target.arch.distro_options]
    Path(path).write_text("\n".join(lines) + "\n")
    return path


def kernel_env(version, target):
    """Kbuild's packaging variables: the source name, linux plus the
    target's deb_kernel (two kernels of one architecture upload apart);
    the package version (Kbuild's own counts the builds of the
    directory); as maintainer the one debian/control names for the
    library packages; and the date of every file in the packages,
    kbuild's build timestamp, so that a rebuild makes the same bytes
    (the linux-libc-dev both i386 kernels build is then one file).  A
    cross build leaves out linux-headers (Kbuild's nokernelheaders
    profile): its programs (scripts/, for building modules out of tree)
    run on the target, so they need the target architecture's libssl-dev
    and a compiler for it from a foreign architecture in the host's dpkg,
    which no build here adds."""
    m = re.search(r"^Maintainer: (.+) <(.+)>$",
                  (REPO / "debian/control").read_text(), re.M)
    if not m:
        raise StepFailed("debian/control: no Maintainer: Name <email>")
    env = kbuild.make_env()
    name = f"linux{target.deb_kernel}"
    epoch = subprocess.run(["date", "-d", env["KBUILD_BUILD_TIMESTAMP"],
                            "+%s"], check=True, stdout=subprocess.PIPE,
                           text=True).stdout.strip()
    return {**env, "KDEB_SOURCENAME": name,
            "KDEB_PKGVERSION": f"{version}-1", "SOURCE_DATE_EPOCH": epoch,
            "DEBFULLNAME": m.group(1), "DEBEMAIL": m.group(2),
            **({} if target.arch == HOST else
               {"DEB_BUILD_PROFILES": f"pkg.{name}.nokernelheaders"})}


def kernel_packages(out, arches, log_dir=LOG_DIR, names=None):
    """The PDA kernel of each target that names a deb_kernel (of those
    @names, if given), for each of @arches, as Kbuild's make bindeb-pkg
    packages it (linux-image with its modules, linux-libc-dev, and
    linux-headers when it is the host's architecture: kernel_env()), from
    the target's config plus configs/distro.config; into @out.  Returns
    their .changes files."""
    pristine, tree = check.patched_tree()
    version = source.kernel_version(pristine)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    changes = []
    for target in TARGETS.values():
        if not target.deb_kernel or target.arch not in arches or \
                names is not None and target.name not in names:
            continue
        home = KERNEL_BUILD / target.name
        bdir = home / "build"
        log = reset_log(Path(log_dir) / f"kernel-{target.name}.log")
        home.mkdir(parents=True, exist_ok=True)
        # The last run's packages: bindeb-pkg writes them beside bdir.
        for old in home.glob("*.*"):
            old.unlink()
        frag = kernel_fragment(target, home / "distro-arch.config")
        with Phase(f"deb {target.name}", "configure", log):
            kbuild.configure(target, tree, bdir, log,
                             extra_fragments=(kbuild.CONFIGS /
                                              "distro.config", frag))
        with Phase(f"deb {target.name}", "make bindeb-pkg", log):
            run(kbuild.make_cmd(target, tree, bdir, "bindeb-pkg"), log,
                env=kernel_env(version, target),
                what=f"[{target.name}] bindeb-pkg")
        changes.append(move_upload(home.glob("*.changes"), out, target.name,
                                   log))
    return changes


# What make deb builds: each a function (output folder, arches) -> its
# .changes files, which lint() and the report take as they come, and
# whether a lintian error or warning fails the run: ours must be clean;
# the kernel's are Kbuild's packaging, reported as they are.
BUILDS = (("library packages (debian/)", library_packages, True),
          ("kernel packages (make bindeb-pkg)", kernel_packages, False))


def lint(changes, log_dir=LOG_DIR):
    """lintian on each .changes; returns the Packages it lists, each
    with its E: and W: tags (those of the .changes itself go to every
    package of it)."""
    packages = []
    source = subprocess.run(["dpkg-parsechangelog", "-l",
                             REPO / "debian/changelog", "-SSource"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    for path in changes:
        log = reset_log(Path(log_dir) / f"lintian-{path.stem}.log")
        with Phase("deb", f"lintian {path.name}", log):
            r = subprocess.run(["lintian", path], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            Path(log).write_text(r.stdout)
        tags = {}
        for line in r.stdout.splitlines():
            m = LINTIAN_TAG.match(line)
            if m:
                tags.setdefault(m.group(2), []).append(line)
        if r.returncode and not tags:
            fail(f"lintian {path.name} failed (exit {r.returncode})", log)
        for deb in changes_files(path):
            if deb.suffix not in (".deb", ".ddeb", ".udeb"):
                continue
            fields = subprocess.run(
                ["dpkg-deb", "-f", deb, "Package", "Version",
                 "Architecture"], stdout=subprocess.PIPE, check=True,
                text=True).stdout
            f = dict(ln.split(": ", 1) for ln in fields.splitlines())
            packages.append(Package(
                f["Package"], f["Version"], f["Architecture"], deb,
                tags.get(f["Package"], []) + tags.get(source, [])))
    return packages


def report(packages):
    """One line per package, then each tag under it."""
    width = max(len(p.name) for p in packages)
    for p in packages:
        say(f"  {p.name:<{width}}  {p.version}  {p.arch:<6}  "
            f"{p.path.name}  {p.verdict()}")
        for tag in p.tags:
            say(f"      {tag}")


def main():
    arches = list(ARCHES.values())
    lacks = missing(arches)
    if lacks:
        raise StepFailed("deb: this host lacks " + ", ".join(
            f"{prog} (Debian package {pkg})" for prog, pkg in lacks))
    shutil.rmtree(OUT, ignore_errors=True)
    start = time.monotonic()
    packages, dirty = [], []
    for what, build, strict in BUILDS:
        say(f"[deb] {what}")
        made = lint(build(OUT, arches))
        packages += made
        dirty += [p for p in made if p.tags and strict]
    say(f"[deb] built in {time.monotonic() - start:.0f}s, in {OUT}:")
    report(packages)
    if dirty:
        say(f"ERROR: lintian found errors or warnings in "
            f"{', '.join(sorted({p.name for p in dirty}))} "
            f"(logs: {LOG_DIR}/lintian-*.log)")
        return 1
    return 0
