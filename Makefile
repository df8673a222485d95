# SPDX-License-Identifier: GPL-2.0
#
# PDA: a thin front over scripts/pda.  Every goal first installs what it
# needs (scripts/deps, from scripts/packages.txt).

PDA := scripts/pda

.PHONY: run check check-full bench debian-configs randconfigs patches deb \
	distro scale memcached deps clean

run: deps
	$(PDA) run

check: deps
	$(PDA) check $(if $(EXTRA_TESTS),--extra-tests $(EXTRA_TESTS)) \
		$(if $(ONLY),--only $(ONLY)) $(if $(SEED),--seed $(SEED))

check-full: deps
	$(PDA) check-full $(if $(PART),--part $(PART)) \
		$(if $(SEED),--seed $(SEED))

bench: deps
	$(PDA) bench $(if $(ONLY),--only $(ONLY))

debian-configs: deps
	$(PDA) debian-configs $(if $(FLAVOURS),--flavour $(FLAVOURS)) \
		$(if $(FULL),--full)

randconfigs: deps
	$(PDA) randconfigs $(if $(ARCHES),--arch $(ARCHES))

patches: deps
	$(PDA) patches $(if $(OUT),--out $(OUT)) $(if $(CHECK),--check)

# Debian packages (debian/), for every architecture, into
# ${XDG_CACHE_HOME:-$HOME/.cache}/pda/deb.
deb: deps
	$(PDA) deb

# Debian 12 booted with systemd on the PDA kernels, the packages
# installed in the guest (results/DISTRO.md).  TARGET=kind for one.
distro: deps
	$(PDA) distro $(if $(TARGET),--target $(TARGET))

# Every SMP kernel kind booted with the most CPUs it and QEMU take
# (results/SCALE.md).  TARGET=kind for one (its name, e.g. arm64-scale).
scale: deps
	$(PDA) scale $(if $(TARGET),--target $(TARGET)) \
		$(if $(SEED),--seed $(SEED))

# memcached 1.6.18 unmodified and with its worker stats on a pda_pool
# (users/memcached): its own make test, an exact-stats check, server CPU
# per request (results/MEMCACHED.md).
memcached: deps
	$(PDA) memcached

deps:
	@scripts/deps

clean:
	rm -rf "$${XDG_CACHE_HOME:-$$HOME/.cache}/pda/build" \
		"$${XDG_CACHE_HOME:-$$HOME/.cache}/pda/tree" \
		"$${XDG_CACHE_HOME:-$$HOME/.cache}/pda/logs"
