# SPDX-License-Identifier: GPL-2.0
"""patches/series: which patch carries which new (overlay) files.

Each non-comment line is a patch file name followed by the new files the
same commit adds, e.g.

    0001-x86-pda-user-segment.patch  arch/x86/kernel/pda.c

Patches hold the small hunks into upstream files; new files live in the
checkout and are copied ("overlaid") into the tree.  Every file under the
overlay roots must belong to exactly one series entry, so that
`make patches` exports all of it.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from .progress import StepFailed

OVERLAY_ROOTS = ("arch", "include", "kernel", "tools/lib")


@dataclass
class Entry:
    patch: Path
    overlay: list = field(default_factory=list)


def read(patch_dir, overlay_root):
    """Parse and validate the series; return a list of Entry."""
    series = Path(patch_dir) / "series"
    entries = []
    if series.exists():
        for num, line in enumerate(series.read_text().splitlines(), 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            patch = Path(patch_dir) / words[0]
            if not patch.is_file():
                raise StepFailed(f"{series}:{num}: {words[0]} does not exist")
            for rel in words[1:]:
                if not (Path(overlay_root) / rel).is_file():
                    raise StepFailed(f"{series}:{num}: overlay file {rel} "
                                     "does not exist")
            entries.append(Entry(patch, words[1:]))
    listed = {rel for e in entries for rel in e.overlay}
    for rel in overlay_files(overlay_root):
        if rel not in listed:
            raise StepFailed(f"overlay file {rel} is not in any "
                             f"{series} entry")
    return entries


def overlay_files(root):
    root = Path(root)
    for top in OVERLAY_ROOTS:
        path = root / top
        if path.is_file():
            yield top
        elif path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file():
                    yield str(f.relative_to(root))


def patched_files(patch):
    """Paths a unified diff touches (its a/ and b/ sides)."""
    files = set()
    for line in Path(patch).read_text(errors="replace").splitlines():
        m = re.match(r"^(?:---|\+\+\+) [ab]/(\S+)", line)
        if m:
            files.add(m.group(1))
    return files


def touched(entries):
    files = set()
    for e in entries:
        files.update(e.overlay)
        files.update(patched_files(e.patch))
    return files
