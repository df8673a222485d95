# SPDX-License-Identifier: GPL-2.0
"""The PDA harness: pristine tree -> patched kernels -> guests -> TAP."""
