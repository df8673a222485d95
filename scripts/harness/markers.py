# SPDX-License-Identifier: GPL-2.0
"""The README regions that commands write, between their own markers."""


def replace_marked(text, begin, end, section, name="README.md"):
    """Replace from `begin` to `end` (markers included) by `section`, which
    starts and ends with the same markers; each must be there once in
    `text`, the text of the file `name`."""
    b, e = text.find(begin), text.find(end)
    if b < 0 or e < b or text.count(begin) != 1:
        raise ValueError(f"{name} lacks the markers {begin!r} ... "
                         f"{end!r}")
    return text[:b] + section + text[e + len(end):]


def marked(text, begin, end):
    """The region from `begin` to `end`, markers included, or None unless
    each is there once, in that order."""
    b, e = text.find(begin), text.find(end)
    if b < 0 or e < b or text.count(begin) != 1 or text.count(end) != 1:
        return None
    return text[b:e + len(end)]
