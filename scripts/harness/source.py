# SPDX-License-Identifier: GPL-2.0
"""The pristine Linux 6.12 tree: Debian's linux-source-6.12, or KSRC."""

import os
import re
import shutil
import subprocess
from pathlib import Path

from .paths import CACHE
from .progress import StepFailed, say

DEBIAN_TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
UNPACKED = CACHE / "linux-source-6.12"


def kernel_version(tree):
    """'6.12.117' read from the tree's top Makefile."""
    fields = {}
    try:
        text = (Path(tree) / "Makefile").read_text()
    except OSError:
        raise StepFailed(f"source: {tree} has no Makefile; not a kernel tree")
    for key in ("VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION"):
        m = re.search(rf"^{key} = *(\S*)", text, re.M)
        fields[key] = m.group(1) if m else ""
    return "{VERSION}.{PATCHLEVEL}.{SUBLEVEL}{EXTRAVERSION}".format(**fields)


def check_612(tree):
    version = kernel_version(tree)
    if not version.startswith("6.12."):
        raise StepFailed(f"source: {tree} is Linux {version}; "
                         "PDA is a series against 6.12")
    return version


def unpack_debian():
    """Unpack Debian's tarball once; a half-done unpack never counts."""
    if (UNPACKED / "Makefile").exists():
        return UNPACKED
    if not DEBIAN_TARBALL.exists():
        raise StepFailed(f"source: {DEBIAN_TARBALL} missing; "
                         "apt-get install linux-source-6.12 (scripts/deps)")
    say(f"source: unpacking {DEBIAN_TARBALL} into {CACHE}")
    tmp = CACHE / "unpack.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run(["tar", "-C", tmp, "-xf", DEBIAN_TARBALL], check=True)
    (tmp / "linux-source-6.12").rename(UNPACKED)
    tmp.rmdir()
    return UNPACKED


def pristine():
    """Return (path, version) of the pristine tree to build from."""
    ksrc = os.environ.get("KSRC")
    tree = Path(ksrc).resolve() if ksrc else unpack_debian()
    version = check_612(tree)
    origin = "KSRC" if ksrc else "Debian linux-source-6.12"
    say(f"source: Linux {version} from {tree} ({origin})")
    return tree, version
