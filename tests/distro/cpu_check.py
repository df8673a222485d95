#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Debian's Python asking the C library for its CPU number, as any
unmodified program does: sched_getcpu() looked up the way the dynamic
loader binds a program's call (the global scope, where a preloaded
library comes first), called while pinned to each CPU in turn.

Prints "provider BITS FILE" (the object sched_getcpu() resolved to, by
dladdr()), "cpu BITS PINNED GOT" per CPU, then "method BITS NAME"
(pda_getcpu_method(), if some object has it: the way the library found
the number)."""

import ctypes
import os


class DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p),
                ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def main():
    scope = ctypes.CDLL(None)
    getcpu = scope.sched_getcpu
    bits = ctypes.sizeof(ctypes.c_void_p) * 8
    info = DlInfo()
    if scope.dladdr(ctypes.cast(getcpu, ctypes.c_void_p),
                    ctypes.byref(info)):
        print(f"provider {bits} {info.dli_fname.decode()}")
    else:
        print(f"provider {bits} unknown")
    for cpu in sorted(os.sched_getaffinity(0)):
        os.sched_setaffinity(0, {cpu})
        print(f"cpu {bits} {cpu} {getcpu()}")
    try:
        method = scope.pda_getcpu_method
    except AttributeError:
        print(f"method {bits} no-library")
        return
    method.restype = ctypes.c_char_p
    print(f"method {bits} {method().decode()}")


if __name__ == "__main__":
    main()
