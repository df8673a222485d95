// SPDX-License-Identifier: GPL-2.0
/*
 * What machine the figures came from, and whether they mean anything.
 *
 * Timing is meaningless on an emulated CPU: QEMU TCG says so in its
 * hypervisor CPUID leaf ("TCGTCGTCGTCG"); Bochs has no such leaf and
 * emulates a real CPU model (this project's: an Atom N270), so we look for
 * "bochs" in the CPU brand, /proc/cpuinfo and DMI, and for its ACPI OEM ID
 * with no hypervisor leaf; and accept "pda.emul" on the kernel command
 * line from a harness that knows.
 * ARM has no CPUID: QEMU's "virt" board says "linux,dummy-virt" in the
 * device tree, and on this project's x86 hosts an ARM guest is TCG.
 * "pda.icount" on the command line means qemu -icount shift=0, where
 * guest time counts instructions and is deterministic.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/klog.h>
#include <sys/utsname.h>
#include "segbench.h"

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

/* @word as a whole token of /proc/cmdline ("word" or "word=..."). */
int sb_cmdline_has(const char *word)
{
	char buf[4096];
	const char *p;
	size_t n = strlen(word);

	if (read_file("/proc/cmdline", buf, sizeof(buf)))
		return 0;
	for (p = buf; (p = strstr(p, word)); p += n) {
		if ((p == buf || isspace((unsigned char)p[-1])) &&
		    (!p[n] || isspace((unsigned char)p[n]) || p[n] == '='))
			return 1;
	}
	return 0;
}

int sb_kernel_version(int *major, int *minor)
{
	struct utsname u;

	*major = *minor = 0;
	if (uname(&u) || sscanf(u.release, "%d.%d", major, minor) != 2)
		return -1;
	return 0;
}

/* First "key : value" line of /proc/cpuinfo whose key starts with @key. */
static int cpuinfo(const char *key, char *val, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!c || strncmp(line, key, strlen(key)))
			continue;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		c[strcspn(c, "\n")] = '\0';
		snprintf(val, len, "%s", c);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static void __attribute__((unused)) trim(char *s)
{
	char *p = s;
	size_t n;

	while (*p == ' ')
		p++;
	memmove(s, p, strlen(p) + 1);
	n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
}

#ifdef SB_X86
static void cpuid(unsigned int leaf, unsigned int r[4])
{
	asm volatile("cpuid"
		     : "=a" (r[0]), "=b" (r[1]), "=c" (r[2]), "=d" (r[3])
		     : "0" (leaf), "2" (0));
}

static void cpu_ident(struct sb_machine *m, char *hv, size_t hvlen)
{
	unsigned int r[4], fam, model, i;
	char brand[49] = "";

	cpuid(0x80000000u, r);
	if (r[0] >= 0x80000004u) {
		for (i = 0; i < 3; i++) {
			cpuid(0x80000002u + i, r);
			memcpy(brand + 16 * i, r, 16);
		}
		brand[48] = '\0';
		trim(brand);
	}
	cpuid(1, r);
	fam = (r[0] >> 8) & 0xf;
	model = (r[0] >> 4) & 0xf;
	if (fam == 0xf)
		fam += (r[0] >> 20) & 0xff;
	if (fam == 6 || fam >= 0xf)
		model |= ((r[0] >> 16) & 0xf) << 4;
	snprintf(m->cpu_id, sizeof(m->cpu_id), "family %u model %u stepping %u",
		 fam, model, r[0] & 0xf);
	snprintf(m->cpu_model, sizeof(m->cpu_model), "%s",
		 brand[0] ? brand : "unknown x86");
	hv[0] = '\0';
	if (r[2] & (1u << 31)) {
		char v[13];

		cpuid(0x40000000u, r);
		memcpy(v, &r[1], 4);
		memcpy(v + 4, &r[2], 4);
		memcpy(v + 8, &r[3], 4);
		v[12] = '\0';
		snprintf(hv, hvlen, "%s", v);
	}
}
#else
static void cpu_ident(struct sb_machine *m, char *hv, size_t hvlen)
{
	char v[96];

	hv[0] = '\0';
	(void)hvlen;
	if (!cpuinfo("model name", v, sizeof(v)) ||
	    !cpuinfo("Processor", v, sizeof(v)))
		snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", v);
	else
		snprintf(m->cpu_model, sizeof(m->cpu_model), "unknown");
	if (!cpuinfo("CPU part", v, sizeof(v)))
		snprintf(m->cpu_id, sizeof(m->cpu_id), "part %.40s", v);
}
#endif

/*
 * Does the firmware's ACPI say Bochs? Its BIOS (and QEMU, which took its
 * tables from it) writes OEM ID "BOCHS " in the FADT and MADT and "BXPC"
 * in the DSDT. /sys/firmware/acpi/tables is missing on this project's
 * small guests, so look where the kernel printed them at boot, in the
 * kernel log (needs CAP_SYSLOG: the guests run us as root).
 */
static int acpi_says_bochs(void)
{
	static char log[1 << 17];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);

	if (n <= 0)
		return 0;
	log[n] = '\0';
	return strstr(log, " BOCHS ") != NULL || strstr(log, " BXPC ") != NULL;
}

static int mentions(const char *s, const char *word)
{
	return s && strcasestr(s, word) != NULL;
}

void sb_sysinfo(struct sb_machine *m)
{
	char hv[16], buf[256] = "", dmi[128] = "", model[128] = "", dt[128] = "";
	struct utsname u;
	int cpus[SB_MAX_CPUS];
	time_t now = time(NULL);

	memset(m, 0, sizeof(*m));
	snprintf(m->arch, sizeof(m->arch), "%s", SB_ARCH);
	cpu_ident(m, hv, sizeof(hv));
	if (!uname(&u))
		snprintf(m->kernel, sizeof(m->kernel), "%s %s %s",
			 u.release, u.version, u.machine);
	snprintf(m->libc, sizeof(m->libc), "glibc %s", gnu_get_libc_version());
	snprintf(m->compiler, sizeof(m->compiler), "gcc %s", __VERSION__);
	strftime(m->date, sizeof(m->date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	m->ncpus = sb_online_cpus(cpus, SB_MAX_CPUS);
	if (!read_file("/proc/loadavg", buf, sizeof(buf))) {
		int end = 0;

		/* The 1, 5 and 15 minute figures only. */
		sscanf(buf, "%*s %*s %*s%n", &end);
		buf[end] = '\0';
		snprintf(m->loadavg, sizeof(m->loadavg), "%.31s", buf);
	}

	cpuinfo("model name", model, sizeof(model));
	/* ARM: the QEMU "virt" board names itself in the device tree. */
	if (read_file("/sys/firmware/devicetree/base/compatible", dt, sizeof(dt)))
		read_file("/proc/device-tree/compatible", dt, sizeof(dt));
	read_file("/sys/class/dmi/id/sys_vendor", dmi, sizeof(dmi));
	read_file("/sys/class/dmi/id/bios_vendor", buf, sizeof(buf));
	strncat(dmi, buf, sizeof(dmi) - strlen(dmi) - 1);

	m->mode = MODE_NATIVE;
	if (!strcmp(hv, "TCGTCGTCGTCG")) {
		m->mode = MODE_EMULATED;
		snprintf(m->virt, sizeof(m->virt), "QEMU TCG (emulated)");
	} else if (mentions(m->cpu_model, "bochs") || mentions(model, "bochs") ||
		   mentions(dmi, "bochs")) {
		m->mode = MODE_EMULATED;
		snprintf(m->virt, sizeof(m->virt), "Bochs (emulated)");
	} else if (!hv[0] && (mentions(m->cpu_model, "qemu") ||
				mentions(model, "qemu"))) {
		/* QEMU's own CPU models without KVM's hypervisor leaf. */
		m->mode = MODE_EMULATED;
		snprintf(m->virt, sizeof(m->virt), "QEMU (emulated CPU model)");
	} else if (!hv[0] && acpi_says_bochs()) {
		/*
		 * Bochs firmware and no hypervisor leaf: QEMU would have
		 * shown TCG's or KVM's. Bochs sets no leaf of its own.
		 */
		m->mode = MODE_EMULATED;
		snprintf(m->virt, sizeof(m->virt), "Bochs (emulated, ACPI OEM ID)");
	} else if (!strcmp(dt, "linux,dummy-virt")) {
		/* This project's ARM guests run under TCG on an x86 host. */
		m->mode = MODE_EMULATED;
		snprintf(m->virt, sizeof(m->virt), "QEMU virt board (TCG)");
	} else if (sb_cmdline_has("pda.emul")) {
		m->mode = MODE_EMULATED;
		snprintf(m->virt, sizeof(m->virt), "emulated (pda.emul)");
	} else if (hv[0]) {
		snprintf(m->virt, sizeof(m->virt), "virtualised (%s)", hv);
	} else {
		snprintf(m->virt, sizeof(m->virt), "none seen");
	}
	/* icount makes the emulated clock count instructions: usable. */
	if (sb_cmdline_has("pda.icount")) {
		m->mode = MODE_ICOUNT;
		strncat(m->virt, ", -icount shift=0",
			sizeof(m->virt) - strlen(m->virt) - 1);
	}
}
