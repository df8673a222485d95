#!/bin/dash
# SPDX-License-Identifier: GPL-2.0
#
# The first boot of a Debian root that mmdebstrap only unpacked (its
# extract variant: the host runs no program of the guest's architecture),
# started by the kernel as init=/pda/firstboot.sh.  It does what
# debootstrap's second stage does: installs the unpacked packages with the
# guest's own dpkg, the Essential ones first, so every maintainer script
# runs here (once: a later boot of the same disk skips it).  Then it
# enables make distro's checks, installs the PDA packages in /pda/debs
# with dpkg -i, if any, and powers off.
#
# dash, not sh: /bin/sh is made by dash's maintainer script, which has
# not run yet.
#
# Each step prints "pda-firstboot: STEP" and, at the end, "pda-firstboot:
# done" or "pda-firstboot: FAILED STEP"; the harness reads the console.

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true
export LC_ALL=C.UTF-8
exec </dev/null

ARCHIVES=/var/cache/apt/archives
CONFIGURED=/var/lib/pda-distro/configured

step() {
	echo "pda-firstboot: $*"
}

# PID 1 must never exit: that is a kernel panic.  A failure names its
# step and powers off.
halt() {
	sync
	mount -o remount,ro / 2>/dev/null
	systemctl --force --force poweroff
	sleep 60
}

die() {
	step "FAILED $*"
	halt
}

run() {
	what=$1
	shift
	step "$what: $*"
	"$@" || die "$what (exit $?)"
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -o remount,rw / || die "remount / read-write"

# No daemon starts while its package is configured: systemd is not
# running, and sysvinit's scripts would start one for real.
install_debian() {
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	essential=
	rest=
	for deb in "$ARCHIVES"/*.deb; do
		if [ "$(dpkg-deb -f "$deb" Essential)" = yes ]; then
			essential="$essential $deb"
		else
			rest="$rest $deb"
		fi
	done
	# The Essential set first, as debootstrap does: their maintainer
	# scripts may use one another before their dependencies are
	# configured.
	# shellcheck disable=SC2086 # word splitting of the lists is wanted
	run "install the Essential packages" \
		dpkg --force-depends --install $essential
	# shellcheck disable=SC2086
	run "install the other packages" dpkg --force-depends --install $rest
	run "configure every package" dpkg --configure --pending
	run "check the package database" sh -c '! dpkg --audit | grep .'
	rm -f "$ARCHIVES"/*.deb
	echo pda >/etc/hostname
	echo '/dev/vda / ext4 defaults 0 1' >/etc/fstab
	rm -f /usr/sbin/policy-rc.d
	mkdir -p "${CONFIGURED%/*}"
	touch "$CONFIGURED"
}

# The packages mmdebstrap unpacked, once: make distro keeps the disk
# after this and starts each kind's install from a copy of it.
if [ ! -e "$CONFIGURED" ]; then
	install_debian
fi

# A foreign architecture's program whose package cannot sit beside the
# native one (Multi-Arch: foreign), unpacked under /opt; its libraries
# are installed packages.
for deb in /pda/unpack/*.deb; do
	[ -e "$deb" ] || continue
	dir=/opt/$(dpkg-deb -f "$deb" Package)-$(dpkg-deb -f "$deb" Architecture)
	run "unpack $deb into $dir" dpkg-deb -x "$deb" "$dir"
done

# make distro's checks, on every later boot.
cp /pda/pda-distro-check.service /etc/systemd/system/
run "enable the checks" systemctl enable pda-distro-check.service

# The PDA packages, as a user installs them.
if [ -n "$(ls /pda/debs)" ]; then
	# shellcheck disable=SC2046
	run "dpkg -i the PDA packages" dpkg -i $(ls /pda/debs/*.deb)
fi

step 'done'
halt
