// SPDX-License-Identifier: GPL-2.0
/*
 * One tiny guest test with many faces, for testing the test runner
 * (tests/init/init.c) on the host: what it does depends on the name it
 * is run under, so one build copied under several names gives a /tests
 * directory with every outcome the runner must tell apart.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');
	int i;

	name = name ? name + 1 : argv[0];
	/* Test names may carry a sort prefix: "03_fail" acts as "fail". */
	if (strchr(name, '_'))
		name = strchr(name, '_') + 1;

	if (!strcmp(name, "pass")) {
		printf("hello from pass\n");
		fflush(stdout);
		fprintf(stderr, "stderr from pass\n");
		/* A last line without newline must still come out whole. */
		printf("no newline");
		return 0;
	}
	if (!strcmp(name, "skip")) {
		printf("# nothing to do here\n");
		return 4;	/* KSFT_SKIP */
	}
	if (!strcmp(name, "fail"))
		return 3;
	if (!strcmp(name, "signal")) {
		fflush(stdout);
		abort();
	}
	if (!strcmp(name, "args")) {
		printf("argc=%d", argc);
		for (i = 1; i < argc; i++)
			printf(" [%s]", argv[i]);
		printf("\n");
		return 0;
	}
	if (!strcmp(name, "hang")) {
		/*
		 * Leave a grandchild in a session of its own, which killing
		 * the test's process group does not reach, and that holds
		 * the output pipe open.  Its pid goes to argv[1] so the host
		 * test can check that the runner killed it.
		 */
		pid_t pid = fork();

		if (pid == 0) {
			setsid();
			for (;;)
				pause();
		}
		if (argc > 1) {
			FILE *f = fopen(argv[1], "w");

			if (f) {
				fprintf(f, "%d\n", pid);
				fclose(f);
			}
		}
		printf("hanging\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(name, "orphan")) {
		/* Exit at once, leaving a child behind that keeps the pipe. */
		pid_t pid = fork();

		if (pid == 0) {
			setsid();
			for (;;)
				pause();
		}
		if (argc > 1) {
			FILE *f = fopen(argv[1], "w");

			if (f) {
				fprintf(f, "%d\n", pid);
				fclose(f);
			}
		}
		return 0;
	}
	fprintf(stderr, "tiny: unknown role %s\n", name);
	return 1;
}
