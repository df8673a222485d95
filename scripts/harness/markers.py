# SPDX-License-Identifier: GPL-2.0
"""The README regions that commands write, between their own markers."""


def replace_marked(text, begin, end, section):
    """Replace from `begin` to `end` (markers included) by `section`, which
    starts and ends with the same markers; each must be there once."""
    b, e = text.find(begin), text.find(end)
    if b < 0 or e < b or text.count(begin) != 1:
        raise ValueError(f"README.md lacks the markers {begin!r} ... "
                         f"{end!r}")
    return text[:b] + section + text[e + len(end):]
