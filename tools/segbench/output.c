// SPDX-License-Identifier: GPL-2.0
/*
 * Result output: a table for people, JSON for the plot script and the
 * committed results, CSV for spreadsheets. No benchmark code here, so the
 * host unit tests can link this file alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "segbench.h"

void sb_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* RFC 4180: quote when needed, double the quotes inside. */
void sb_csv_string(FILE *f, const char *s)
{
	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Negative and non-finite values mean "not available": empty string. */
void sb_fmt_num(char *buf, size_t len, double v, int prec)
{
	if (!len)
		return;
	if (v < 0 || !isfinite(v)) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, "%.*f", prec, v);
}

static const char *mode_name(enum sb_mode mode)
{
	switch (mode) {
	case MODE_NATIVE:
		return "native";
	case MODE_EMULATED:
		return "emulated";
	case MODE_ICOUNT:
		return "icount";
	}
	return "?";
}

static void json_num(FILE *f, const char *key, double v, int prec)
{
	char buf[48];

	sb_fmt_num(buf, sizeof(buf), v, prec);
	fprintf(f, "\"%s\": %s", key, buf[0] ? buf : "null");
}

static void json_kv(FILE *f, const char *key, const char *val)
{
	fprintf(f, "\"%s\": ", key);
	sb_json_string(f, val);
}

static void out_json(FILE *f, const struct sb_machine *m,
		     const struct result *r, size_t n)
{
	size_t i;

	fputs("{\n  \"tool\": \"segbench\",\n  \"format\": 1,\n", f);
	fputs("  \"machine\": {\n    ", f);
	json_kv(f, "arch", m->arch);
	fputs(",\n    ", f);
	json_kv(f, "cpu_model", m->cpu_model);
	fputs(",\n    ", f);
	json_kv(f, "cpu_id", m->cpu_id);
	fputs(",\n    ", f);
	json_kv(f, "kernel", m->kernel);
	fputs(",\n    ", f);
	json_kv(f, "libc", m->libc);
	fputs(",\n    ", f);
	json_kv(f, "virt", m->virt);
	fputs(",\n    ", f);
	json_kv(f, "compiler", m->compiler);
	fputs(",\n    ", f);
	json_kv(f, "date", m->date);
	fputs(",\n    ", f);
	json_kv(f, "loadavg", m->loadavg);
	fprintf(f, ",\n    \"ncpus\": %d,\n    ", m->ncpus);
	json_num(f, "tsc_mhz", m->tsc_mhz > 0 ? m->tsc_mhz : -1, 1);
	fputs(",\n    ", f);
	json_num(f, "core_mhz", m->core_mhz > 0 ? m->core_mhz : -1, 1);
	fputs("\n  },\n  ", f);
	json_kv(f, "mode", mode_name(m->mode));
	fprintf(f, ",\n  \"meaningful\": %s,\n  ",
		m->mode == MODE_EMULATED ? "false" : "true");
	json_kv(f, "unit", m->unit);
	fprintf(f, ",\n  \"reference\": \"%s\",\n  \"results\": [", SB_REF_NAME);
	for (i = 0; i < n; i++) {
		const struct result *x = &r[i];

		fputs(i ? ",\n    {" : "\n    {", f);
		json_kv(f, "name", x->name);
		fputs(", ", f);
		json_kv(f, "group", x->group);
		fputs(", ", f);
		json_kv(f, "desc", x->desc);
		fprintf(f, ", \"status\": \"%s\"", x->skipped ? "skip" : "ok");
		fputs(", ", f);
		json_kv(f, "note", x->reason);
		fprintf(f, ", \"emulated\": %s, \"threads\": %d",
			x->emulated ? "true" : "false", x->threads);
		fprintf(f, ", \"exact\": %s", x->exact < 0 ? "null" :
			x->exact ? "true" : "false");
		fprintf(f, ", \"trials\": %u, \"iters\": %lu, ",
			x->trials, x->iters);
		json_num(f, "core_mhz", x->core_mhz > 0 ? x->core_mhz : -1, 1);
		fputs(", ", f);
		json_num(f, "min_cycles", x->skipped ? -1 : x->min_cyc, 2);
		fputs(", ", f);
		json_num(f, "median_cycles", x->skipped ? -1 : x->med_cyc, 2);
		fputs(", ", f);
		json_num(f, "min_ns", x->skipped ? -1 : x->min_ns, 3);
		fputs(", ", f);
		json_num(f, "median_ns", x->skipped ? -1 : x->med_ns, 3);
		fputs(", ", f);
		json_num(f, "ratio_ref", x->skipped ? -1 : x->ratio, 2);
		fputc('}', f);
	}
	fputs("\n  ]\n}\n", f);
}

static void out_csv(FILE *f, const struct sb_machine *m,
		    const struct result *r, size_t n)
{
	size_t i;

	fputs("name,group,status,emulated,threads,exact,min_cycles,"
	      "median_cycles,min_ns,median_ns,ratio_ref,unit,note,desc\n", f);
	for (i = 0; i < n; i++) {
		const struct result *x = &r[i];
		char b[4][48], rb[48];
		int sk = x->skipped;

		sb_fmt_num(b[0], sizeof(b[0]), sk ? -1 : x->min_cyc, 2);
		sb_fmt_num(b[1], sizeof(b[1]), sk ? -1 : x->med_cyc, 2);
		sb_fmt_num(b[2], sizeof(b[2]), sk ? -1 : x->min_ns, 3);
		sb_fmt_num(b[3], sizeof(b[3]), sk ? -1 : x->med_ns, 3);
		sb_fmt_num(rb, sizeof(rb), sk ? -1 : x->ratio, 2);
		sb_csv_string(f, x->name);
		fputc(',', f);
		sb_csv_string(f, x->group);
		fprintf(f, ",%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,",
			sk ? "skip" : "ok", x->emulated, x->threads,
			x->exact < 0 ? "" : x->exact ? "1" : "0",
			b[0], b[1], b[2], b[3], rb, m->unit);
		sb_csv_string(f, x->reason);
		fputc(',', f);
		sb_csv_string(f, x->desc);
		fputc('\n', f);
	}
}

static void out_text(FILE *f, const struct sb_machine *m,
		     const struct result *r, size_t n)
{
	size_t i;

	fprintf(f, "segbench (%s) on %s [%s], %d CPUs\n", m->arch,
		m->cpu_model, m->cpu_id, m->ncpus);
	fprintf(f, "kernel %s; %s; virt: %s; load %s\n", m->kernel, m->libc,
		m->virt, m->loadavg);
	if (m->tsc_mhz > 0)
		fprintf(f, "TSC %.1f MHz, core %.1f MHz (calibrated)\n",
			m->tsc_mhz, m->core_mhz);
	if (m->mode == MODE_EMULATED)
		fputs("*** emulated CPU: timings are NOT MEANINGFUL ***\n", f);
	if (m->mode == MODE_ICOUNT)
		fputs("qemu -icount shift=0: times are guest instructions\n", f);
	fprintf(f, "per op, empty loop subtracted; x ref = median / median of %s\n\n",
		SB_REF_NAME);
	fprintf(f, "%-30s %9s %9s %9s %9s %7s  %s\n", "benchmark",
		"min cyc", "med cyc", m->mode == MODE_ICOUNT ? "min insn" :
		"min ns", m->mode == MODE_ICOUNT ? "med insn" : "med ns",
		"x ref", "note");
	for (i = 0; i < n; i++) {
		const struct result *x = &r[i];
		char b[5][48];
		int k;

		if (x->skipped) {
			fprintf(f, "%-30s %9s %9s %9s %9s %7s  skipped: %s\n",
				x->name, "-", "-", "-", "-", "-", x->reason);
			continue;
		}
		sb_fmt_num(b[0], sizeof(b[0]), x->min_cyc, 1);
		sb_fmt_num(b[1], sizeof(b[1]), x->med_cyc, 1);
		sb_fmt_num(b[2], sizeof(b[2]), x->min_ns, 2);
		sb_fmt_num(b[3], sizeof(b[3]), x->med_ns, 2);
		sb_fmt_num(b[4], sizeof(b[4]), x->ratio, 2);
		for (k = 0; k < 5; k++)
			if (!b[k][0])
				snprintf(b[k], sizeof(b[k]), "-");
		fprintf(f, "%-30s %9s %9s %9s %9s %7s  %s%s%s%s\n", x->name,
			b[0], b[1], b[2], b[3], b[4],
			x->emulated ? "[emulated] " : "",
			x->exact == 0 ? "[COUNT WRONG] " : "",
			x->exact == 1 ? "[count exact] " : "", x->reason);
	}
}

void sb_output(FILE *f, enum sb_format fmt, const struct sb_machine *m,
	       const struct result *r, size_t n)
{
	switch (fmt) {
	case FMT_JSON:
		out_json(f, m, r, n);
		break;
	case FMT_CSV:
		out_csv(f, m, r, n);
		break;
	default:
		out_text(f, m, r, n);
		break;
	}
}
