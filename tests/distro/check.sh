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
	# scheduling, time and os, each module in its own process.
	record suite python start
	python3 -m test -j4 --timeout 1200 --junit-xml "$OUT/python.xml" \
		test_os test_posix test_signal test_threading test_thread \
		test_threadsignals test_time test_fork1 test_wait4 test_select \
		test_subprocess test_sched test_concurrent_futures \
		>"$OUT/python.log" 2>&1
	record suite python exit $?
	# systemd's unit tests, as Debian ships them (systemd-tests).
	record suite systemd start
	/usr/lib/systemd/tests/run-unit-tests.py >"$OUT/systemd.log" 2>&1
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
