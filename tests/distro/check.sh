#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What make distro checks inside a booted Debian system: started by
# pda-distro-check.service on every boot after the first.  It waits for
# systemd to finish booting, writes what it finds to /pda/out/LABEL/
# (the harness reads the disk image afterwards), runs Debian's test
# suites when asked, leaves /etc/ld.so.preload as the next boot needs it,
# and powers off.
#
# Kernel arguments, read from /proc/cmdline:
#   pda_distro.label=LABEL        where the results go
#   pda_distro.suites=1           run the test suites (SUITES below)
#   pda_distro.next=on|off        the preload library for the next boot
#
# /pda/out/LABEL/result has one "key value..." line per finding.

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH LC_ALL=C.UTF-8
LIB=libpda-getcpu.so.1

arg() {
	sed -n "s/.*pda_distro\\.$1=\\([^ ]*\\).*/\\1/p" /proc/cmdline
}

LABEL=$(arg label)
OUT=/pda/out/${LABEL:-unlabelled}
rm -rf "$OUT"
mkdir -p "$OUT"
exec >"$OUT/check.log" 2>&1

record() {
	echo "$*" >>"$OUT/result"
}

record kernel "$(uname -r)"
record preload "$(tr '\n' ' ' 2>/dev/null </etc/ld.so.preload)"

# Boot finished: "running", or "degraded" with the failed units.
state=$(timeout 900 systemctl is-system-running --wait)
record state "$state"
record boot "$(systemd-analyze time | head -1)"
record units "$(systemctl list-units --all --plain --no-legend | wc -l)"
systemctl list-units --failed --plain --no-legend | while read -r unit _; do
	record failed "$unit"
done

# Which of the boot's daemons mapped the library.
for prog in systemd systemd-journald systemd-udevd; do
	# systemd is init.
	if [ "$prog" = systemd ]; then
		pid=1
	else
		pid=$(pidof -s "$prog")
	fi
	if [ -z "$pid" ]; then
		record maps "$prog" no-process
	elif grep -q "/$LIB" "/proc/$pid/maps"; then
		record maps "$prog" mapped
	else
		record maps "$prog" not-mapped
	fi
done

# Debian's Python asking the C library for its CPU number on every CPU
# (cpu_check.py), and a 32-bit one beside it where the root has one.
for python in /usr/bin/python3 /opt/*/usr/bin/python3.11; do
	[ -x "$python" ] || continue
	"$python" /pda/cpu_check.py >>"$OUT/result" 2>>"$OUT/cpu_check.err" ||
		record cpu_check_failed "$python"
done

if [ "$(arg suites)" = 1 ]; then
	# Python's regression tests of threads, processes, signals,
	# scheduling (test_posix's sched_* calls; test_sched is the sched
	# module's timed events), time and os, each module in its own
	# process.  Not test_concurrent_futures: ten minutes under TCG, and
	# its waits with a timeout race the emulated clock (test_timeout
	# failed so in a trial on the PDA kernel).
	modules="test_os test_posix test_signal test_threading test_thread
		test_threadsignals test_time test_fork1 test_wait4 test_select
		test_subprocess test_sched"
	# shellcheck disable=SC2086 # one word per module
	record python_modules $modules
	# shellcheck disable=SC2086
	python3 -m test -j4 --timeout 1200 --junit-xml "$OUT/python.xml" \
		$modules >"$OUT/python.log" 2>&1
	record suite python exit $?
	# systemd's unit tests, as Debian ships them (systemd-tests), judged
	# as its run-unit-tests.py judges them (exit 0 passes, 77 skips),
	# one per CPU at a time: that script runs them one by one, too slow
	# under TCG.  Each test's output is kept in unit-tests/.
	mkdir -p "$OUT/unit-tests"
	record systemd_tests "$(find /usr/lib/systemd/tests -maxdepth 1 \
		-name 'test-*' -type f | wc -l)"
	# shellcheck disable=SC2016 # the inner sh expands them
	find /usr/lib/systemd/tests -maxdepth 1 -name 'test-*' -type f |
		sort | xargs -P "$(nproc)" -I '{}' sh -c '
			name=${1##*/}
			"$1" </dev/null >"$2/$name" 2>&1
			case $? in
			0) echo "PASS: $name" ;;
			77) echo "SKIP: $name" ;;
			*) echo "FAIL: $name" ;;
			esac' unit-test '{}' "$OUT/unit-tests" >"$OUT/systemd.log"
	record suite systemd exit $?
fi

journalctl -b --no-pager >"$OUT/journal.txt" 2>&1

# The library on or off for every program from the next boot on: the
# README's commands, as typed here.
case "$(arg next)" in
on)
	echo libpda-getcpu.so.1 >>/etc/ld.so.preload
	;;
off)
	sed -i /libpda-getcpu.so.1/d /etc/ld.so.preload
	;;
esac
record 'done'
sync
systemctl poweroff
