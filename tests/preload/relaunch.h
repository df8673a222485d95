/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's /init runs a test with no environment and no way to give it
 * one, so a preload test's first arguments may say what to set, and the
 * program runs itself again with that environment and no arguments:
 *
 *	PROG --lib PATH [--preload] [--rseq-off] [--expect METHOD]
 *
 * sets PDA_PRELOAD_LIB=PATH, LD_PRELOAD=PATH, GLIBC_TUNABLES=
 * glibc.pthread.rseq=0 and PDA_EXPECT_METHOD=METHOD.  Header only.
 */
#ifndef PDA_PRELOAD_RELAUNCH_H
#define PDA_PRELOAD_RELAUNCH_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* True if argv asks for a relaunch. */
static inline int preload_relaunch_asked(int argc, char **argv)
{
	return argc > 1 && !strcmp(argv[1], "--lib");
}

/* Runs argv[0] again in the environment argv asks for; returns only on
 * failure (2: a bad argument, 1: execve failed).
 */
static inline int preload_relaunch(int argc, char **argv)
{
	static char lib[256], preload[256], expect[64];
	char *envp[5], **e = envp;
	int i;

	for (i = 1; i < argc && e < envp + 4; i++) {
		if (!strcmp(argv[i], "--lib") && i + 1 < argc && !lib[0]) {
			snprintf(lib, sizeof(lib), "PDA_PRELOAD_LIB=%s",
				 argv[++i]);
			*e++ = lib;
		} else if (!strcmp(argv[i], "--preload") && lib[0] &&
			   !preload[0]) {
			snprintf(preload, sizeof(preload), "LD_PRELOAD=%s",
				 lib + strlen("PDA_PRELOAD_LIB="));
			*e++ = preload;
		} else if (!strcmp(argv[i], "--rseq-off")) {
			*e++ = "GLIBC_TUNABLES=glibc.pthread.rseq=0";
		} else if (!strcmp(argv[i], "--expect") && i + 1 < argc &&
			   !expect[0]) {
			snprintf(expect, sizeof(expect), "PDA_EXPECT_METHOD=%s",
				 argv[++i]);
			*e++ = expect;
		} else {
			break;
		}
	}
	if (i < argc) {
		fprintf(stderr, "%s: usage: %s --lib PATH [--preload] "
			"[--rseq-off] [--expect METHOD]\n", argv[0], argv[0]);
		return 2;
	}
	*e = NULL;
	execve(argv[0], (char *[]){ argv[0], NULL }, envp);
	perror("execve");
	return 1;
}

#endif /* PDA_PRELOAD_RELAUNCH_H */
