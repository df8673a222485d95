# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The TAP helpers of the shell host tests (POSIX sh; source it).  Sourcing
# prints the version line; each check then prints one numbered result and
# tap_done prints the plan and exits, non-zero if any check failed, so a
# suite need not know its number of checks in advance.
#
#   tap_ok NAME               ok N NAME
#   tap_not_ok NAME [WHY]     not ok N NAME [# WHY]
#   tap_skip NAME WHY         ok N NAME # SKIP WHY
#   tap_check NAME CMD...     ok if CMD succeeds, else not ok and CMD's
#                             output (stdout and stderr) as diagnostics
#   tap_diag < FILE           FILE as diagnostics (# lines)
#   tap_done                  the plan; exit 1 if anything failed, else 0

tap_n=0
tap_failed=0
echo "TAP version 13"

tap_ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $1"
}

tap_not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n $1${2:+ # $2}"
}

tap_skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $1 # SKIP $2"
}

tap_diag() {
	sed 's/^/# /'
}

tap_check() {
	tap_name=$1
	shift
	# The command runs in a subshell: it cannot change the caller's
	# variables, tap_name included.
	if tap_out=$("$@" 2>&1); then
		tap_ok "$tap_name"
	else
		tap_not_ok "$tap_name"
		[ -z "$tap_out" ] || printf '%s\n' "$tap_out" | tap_diag
	fi
}

tap_done() {
	echo "1..$tap_n"
	if [ "$tap_failed" -ne 0 ]; then
		echo "# $tap_failed of $tap_n checks failed"
		exit 1
	fi
	exit 0
}
