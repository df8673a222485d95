# SPDX-License-Identifier: GPL-2.0
"""make patches: the series, overlay files included, for `git am`.

The commits are made in a scratch repository that holds only the files the
series touches.  `git am` and `git format-patch` read nothing else, so the
export is the same as one made in a full 6.12 repository, at a fraction of
the cost.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import series as series_mod, source
from .paths import CACHE, REPO
from .progress import StepFailed, say

GIT_ENV = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_NAME": "PDA harness",
           "GIT_COMMITTER_EMAIL": "pda@localhost"}
# Where make patches writes the export unless told otherwise.
DEFAULT_OUT = CACHE / "export"
# The identity the stored patches carry in From:, Signed-off-by: and the
# M: lines of the MAINTAINERS entries they add; the export puts the
# exporter's in its place.
PLACEHOLDER = "PDA maintainers <maintainers@pda.example>"
# The file in patches/ naming the 6.12.y the stored patches were last
# refreshed on (their index lines and hunk offsets are that tree's), then
# the sha256 of each as the refresh wrote it.
BASE = "base"


def exporter_identity():
    """"Name <email>" of whoever runs the export: GIT_AUTHOR_NAME and
    GIT_AUTHOR_EMAIL, else git config user.name and user.email."""
    ident = {}
    for key, env in (("name", "GIT_AUTHOR_NAME"),
                     ("email", "GIT_AUTHOR_EMAIL")):
        value = os.environ.get(env)
        if not value:
            proc = subprocess.run(["git", "-C", str(REPO), "config",
                                   f"user.{key}"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
            value = proc.stdout.strip()
        if not value:
            raise StepFailed(
                f"make patches: no git user.{key}: the patches carry your "
                "name as author and in Signed-off-by.  Set it with\n"
                "  git config --global user.name 'Your Name'\n"
                "  git config --global user.email you@example.org")
        ident[key] = value
    return f"{ident['name']} <{ident['email']}>"


def signed(patch, ident, tmp):
    """A copy of @patch whose author, Signed-off-by and MAINTAINERS M:
    lines are @ident.  The M: lines are replaced as context and removed
    lines too: a later patch's hunk next to an entry an earlier one added
    must still apply."""
    out = Path(tmp) / Path(patch).name
    lines = []
    for line in Path(patch).read_text().splitlines(keepends=True):
        if line.startswith(("From: ", "Signed-off-by: ", "+M:\t", " M:\t",
                            "-M:\t")):
            line = line.replace(PLACEHOLDER, ident)
        lines.append(line)
    out.write_text("".join(lines))
    return out


def git(repo, *args, env=None):
    full = {**os.environ, **GIT_ENV, **(env or {})}
    proc = subprocess.run(["git", "-C", str(repo)] + list(args), env=full,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode:
        raise StepFailed(f"git {' '.join(args)} failed:\n{proc.stdout}")
    return proc.stdout


def sparse_repo(pristine, files, version):
    """A git repo with the pristine version of `files`, committed."""
    repo = Path(tempfile.mkdtemp(prefix="pda-export-"))
    git(repo, "init", "-q")
    git(repo, "config", "user.name", "PDA harness")
    git(repo, "config", "user.email", "pda@localhost")
    for rel in sorted(files):
        src = Path(pristine) / rel
        if src.is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / rel)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", f"Linux {version}")
    return repo


def cover_text(patch_dir):
    path = Path(patch_dir) / "cover-letter"
    if not path.exists():
        raise StepFailed(f"{path} missing: first line is the cover "
                         "letter's subject, the rest its body")
    subject, _, body = path.read_text().partition("\n")
    return subject.strip(), body.strip("\n")


def base_line(pristine, version):
    """base-commit: of a git tree; a release tarball has no commit, so say
    which tree it is rather than name the scratch repository's commit."""
    proc = subprocess.run(["git", "-C", str(pristine), "rev-parse",
                           "--verify", "-q", "HEAD"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    if proc.returncode == 0 and Path(pristine, ".git").exists():
        return f"base-commit: {proc.stdout.strip()}"
    pkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}",
                          "linux-source-6.12"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    what = f"Debian's linux-source-6.12 {pkg}" if pkg else "a release tarball"
    return (f"base: Linux {version}, from {what} (no git history, so no "
            "base-commit)")


def series_repo(pristine, version, overlay_root, entries, ident=None):
    """A scratch repository: the pristine files the series touches as the
    base commit, then one commit per series entry (its patch applied with
    git am, its new files added).  @ident, if given, replaces the stored
    patches' placeholder author.  Returns (repo, base commit)."""
    repo = sparse_repo(pristine, series_mod.touched(entries), version)
    signed_dir = tempfile.mkdtemp(prefix="pda-signed-")
    try:
        base = git(repo, "rev-parse", "HEAD").strip()
        for e in entries:
            patch = signed(e.patch, ident, signed_dir) if ident else e.patch
            git(repo, "am", "-q", "--keep-cr", str(patch))
            for rel in e.overlay:
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(overlay_root) / rel, repo / rel)
            if e.overlay:
                git(repo, "add", *e.overlay)
                git(repo, "commit", "-q", "--amend", "--no-edit")
    except StepFailed:
        shutil.rmtree(repo, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(signed_dir, ignore_errors=True)
    return repo, base


def refresh(pristine, version, overlay_root, patch_dir, out):
    """Write each stored patch again into @out, as git format-patch makes
    it from its commit: after a hand edit, the index lines, hunk offsets
    and diffstat are those of the tree the earlier patches leave.  The new
    files stay out of the stored patches; they live in the checkout.
    @out/base names the @version they were made on (write_base)."""
    entries = series_mod.read(patch_dir, overlay_root)
    new_files = [f":(exclude){rel}" for e in entries for rel in e.overlay]
    repo, base = series_repo(pristine, version, overlay_root, entries)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        commits = git(repo, "rev-list", "--reverse",
                      f"{base}..HEAD").split()
        for e, commit in zip(entries, commits):
            text = subprocess.run(
                ["git", "-C", str(repo), "format-patch", "-N",
                 "--zero-commit", "--stdout", "-1", commit, "--", "."] +
                new_files,
                stdout=subprocess.PIPE, check=True, text=True).stdout
            (out / e.patch.name).write_text(text)
    finally:
        shutil.rmtree(repo, ignore_errors=True)
    files = [out / e.patch.name for e in entries]
    write_base(out, version, files)
    return files


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_base(out, version, files):
    """@out/base: @version, then `sha256  name` of each of @files (as
    sha256sum prints it), so that an edit by hand after the refresh shows
    on any base, not only on the one whose index lines the patches carry."""
    sums = "".join(f"{sha256(f)}  {Path(f).name}\n" for f in files)
    (Path(out) / BASE).write_text(f"{version}\n{sums}")


def read_base(patch_dir):
    """(version, {name: sha256}) from @patch_dir/base."""
    version, *sums = (Path(patch_dir) / BASE).read_text().splitlines()
    return version.strip(), {name: digest for digest, name in
                             (line.split() for line in sums)}


def content(text):
    """The lines of a format-patch text without what the base it was made
    on decides: the blob hashes of the index lines, and each hunk header
    (its line numbers, and the function-context text git copies from the
    nearest heading above the hunk, outside the hunk, which upstream
    changes move too).  The message, the diffstat (it counts lines per
    file, so offsets do not move it), the files and every context, - and
    + line stay."""
    lines, in_diff = [], False
    for line in text.splitlines():
        in_diff = in_diff or line.startswith("diff --git ")
        if in_diff and line.startswith("index "):
            line = re.sub(r"^index \w+\.\.\w+", "index", line)
        elif in_diff and line.startswith("@@ "):
            line = "@@"
        lines.append(line)
    return lines


def export(pristine, version, overlay_root, patch_dir, out):
    entries = series_mod.read(patch_dir, overlay_root)
    if not entries:
        raise StepFailed(f"{patch_dir}/series is empty: nothing to export")
    subject, body = cover_text(patch_dir)
    ident = exporter_identity()
    repo, base = series_repo(pristine, version, overlay_root, entries, ident)
    name, _, email = ident.rpartition(" <")
    try:
        out = Path(out)
        shutil.rmtree(out, ignore_errors=True)
        # The cover letter's From: and the Message-Ids are the committer's.
        git(repo, "format-patch", "-q", "--cover-letter", "--thread",
            "-o", str(out), f"{base}..HEAD",
            env={"GIT_COMMITTER_NAME": name,
                 "GIT_COMMITTER_EMAIL": email.rstrip(">")})
    finally:
        shutil.rmtree(repo, ignore_errors=True)
    cover = sorted(out.glob("0000-*.patch"))[0]
    text = cover.read_text()
    text = text.replace("*** SUBJECT HERE ***", subject)
    text = text.replace("*** BLURB HERE ***", body)
    sig = text.rindex("\n-- \n")
    cover.write_text(text[:sig] + f"\n{base_line(pristine, version)}\n" +
                     text[sig:])
    return sorted(out.glob("*.patch"))


def main(out=None, refresh_stored=False):
    pristine, version = source.pristine()
    if refresh_stored:
        out = Path(out or REPO / "patches")
        files = refresh(pristine, version, REPO, REPO / "patches", out)
        say(f"patches: {len(files)} stored patches written again in {out}, "
            f"made on Linux {version} (named in {out / BASE})")
        return 0
    out = Path(out or DEFAULT_OUT)
    files = export(pristine, version, REPO, REPO / "patches", out)
    say(f"patches: {len(files) - 1} patches + cover letter in {out}")
    say(f"apply with: git am {out}/*.patch   (on a Linux {version} tree)")
    return 0
