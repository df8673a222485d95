# SPDX-License-Identifier: GPL-2.0
"""Where things live: the checkout, and the cache outside it."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or
             Path.home() / ".cache") / "pda"
LOGS = CACHE / "logs"
BUILD = CACHE / "build"
CCACHE = CACHE / "ccache"
