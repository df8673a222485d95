# SPDX-License-Identifier: GPL-2.0
"""The patched working tree: pristine + overlay files + patches/series.

The tree is a hard-link copy of the pristine tree.  Only the files the
series touches are ever rewritten, and always by replacing the link, never
through it, so the pristine tree stays pristine.  A file is rewritten only
when its content changes, which keeps Kbuild's incremental builds exact.
"""

import filecmp
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import series as series_mod
from .progress import StepFailed, say

MARKER = ".pda-tree.json"


def _link_copy(src, dst):
    # cp -a copies a symbolic link as a link: given a link to the pristine
    # tree, the "copy" would be that link, and every file the series
    # rewrites would land in the pristine tree itself.
    src = Path(src).resolve()
    tmp = Path(str(dst) + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    if subprocess.call(["cp", "-al", src, tmp],
                       stderr=subprocess.DEVNULL) != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["cp", "-a", src, tmp], check=True)
    tmp.rename(dst)


def apply_patch(patch, workdir):
    """Apply one patch strictly (no fuzz, as git am would)."""
    proc = subprocess.run(["patch", "-p1", "--batch", "--forward",
                           "--fuzz=0", "--no-backup-if-mismatch",
                           "-r", "-", "-d", workdir, "-i", patch],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode == 0:
        return
    current, failed = None, []
    for line in proc.stdout.splitlines():
        m = re.match(r"(?:checking|patching) file '?([^']+)'?", line)
        if m:
            current = m.group(1)
        elif "FAILED" in line or "can't find file" in line or \
                "No such file" in line or "Reversed" in line:
            failed.append(f"{current}: {line.strip()}")
    detail = "\n    ".join(failed or proc.stdout.splitlines()[-5:])
    raise StepFailed(f"patch {Path(patch).name} does not apply:\n    {detail}")


def _stage(pristine, overlay_root, entries, files):
    """Build the touched files, fully patched, in a scratch directory."""
    stage = Path(tempfile.mkdtemp(prefix="pda-stage-"))
    for rel in files:
        src = Path(pristine) / rel
        if src.is_file():
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, stage / rel)
    for e in entries:
        for rel in e.overlay:
            if (Path(pristine) / rel).exists():
                shutil.rmtree(stage, ignore_errors=True)
                raise StepFailed(f"overlay file {rel} exists upstream; "
                                 "change upstream files only by patches")
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(overlay_root) / rel, stage / rel)
        try:
            apply_patch(e.patch, stage)
        except StepFailed:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    return stage


def _replace(src, dst):
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".pda-new")
    shutil.copyfile(src, tmp)
    os.chmod(tmp, os.stat(src).st_mode & 0o7777)
    os.replace(tmp, dst)


def prepare(pristine, tree, overlay_root, patch_dir):
    """Bring `tree` to pristine + series.  Returns the files rewritten."""
    entries = series_mod.read(patch_dir, overlay_root)
    tree = Path(tree)
    marker = tree / MARKER
    state = {}
    if marker.exists():
        state = json.loads(marker.read_text())
    if state.get("pristine") != str(pristine):
        shutil.rmtree(tree, ignore_errors=True)
        say(f"tree: hard-link copy of {pristine} -> {tree}")
        _link_copy(pristine, tree)
        state = {"pristine": str(pristine), "touched": []}

    now = series_mod.touched(entries)
    stage = _stage(pristine, overlay_root, entries, now)
    changed = []
    try:
        for rel in sorted(now | set(state["touched"])):
            want = stage / rel if rel in now else Path(pristine) / rel
            have = tree / rel
            if not want.exists():
                if have.exists():
                    have.unlink()
                    changed.append(rel)
            elif not have.exists() or not filecmp.cmp(want, have,
                                                      shallow=False):
                _replace(want, have)
                changed.append(rel)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    marker.write_text(json.dumps({"pristine": str(pristine),
                                  "touched": sorted(now)}, indent=1))
    say(f"tree: {len(entries)} patches, {len(now)} files touched, "
        f"{len(changed)} rewritten")
    return changed
