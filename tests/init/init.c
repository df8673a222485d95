// SPDX-License-Identifier: GPL-2.0
/*
 * pda-init: PID 1 of the PDA test initramfs.
 *
 * The guest has no shell, so this one static program does all of user
 * space: it mounts proc, sysfs and devtmpfs, runs every executable in
 * /tests with a timeout, prints the results as KTAP, checks the kernel
 * log for splats, and reboots (QEMU runs with -no-reboot, so the reboot
 * ends the VM; Bochs is stopped by the harness on the final line).
 *
 * Output (the harness parses it):
 *
 *	KTAP version 1
 *	1..N				N = number of tests + 1
 *	    <test output, indented by 4 spaces>
 *	ok 1 name
 *	ok 2 name # SKIP		the test exited with 4 (KSFT_SKIP)
 *	not ok 3 name # exit=1
 *	not ok 4 name # signal=SIGSEGV
 *	not ok 5 name # TIMEOUT after 300 s
 *	ok N kernel_log_clean
 *	# pda-init: done
 *
 * Every executable regular file in /tests is a test, except hidden files
 * and NAME.args, which, if present, holds the whitespace-separated
 * arguments for /tests/NAME.  The per-test timeout is 300 s, or
 * pda.timeout=SECONDS from the kernel command line.
 *
 * When it is not PID 1 it runs on the host, for testing itself:
 *
 *	init --dir DIR [--timeout S] [--no-reboot] [--klog FILE]
 *
 * runs the tests in DIR the same way, mounts and reboots nothing, and
 * exits 0 only if every test passed or skipped.  In host mode the kernel
 * log check only looks at messages logged while the tests ran (the host's
 * boot log is not ours to judge), or, with --klog, at the lines of FILE,
 * so that the host test can check the splat detection itself.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../guest/lib/klog.h"

/* klogctl() action numbers are not in glibc's <sys/klog.h>. */
#define SYSLOG_ACTION_CONSOLE_LEVEL_PDA	8

#define TESTS_DIR		"/tests"
#define DEFAULT_TIMEOUT		300
#define KSFT_SKIP		4
#define MAX_ARGS		64
#define ARGS_FILE_MAX		4096
#define LINE_MAX_LEN		4096
#define KLOG_MIN_SIZE		(1 << 20)
#define KLOG_MAX_REPORT		200
/* Lines after a splat printed with it: its backtrace, to its end marker. */
#define KLOG_TRACE_LINES	40
/* Trace lines in all, so a storm of splats stays readable on a serial line. */
#define KLOG_TRACE_TOTAL	400
/* After the test's main process exits, how long its output may still drain. */
#define DRAIN_GRACE_MS		1000
/* After SIGKILL, how long to wait for the process to go away. */
#define KILL_GRACE_MS		5000

/* syslog(2) actions; <sys/klog.h> does not name them. */
#define SYSLOG_ACTION_READ_ALL		3
#define SYSLOG_ACTION_SIZE_BUFFER	10

struct options {
	const char *dir;
	const char *klog_file;
	unsigned int timeout;
	bool pid1;
	bool reboot;
};

static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# pda-init: ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- setup */

static void mount_one(const char *src, const char *dst, const char *type)
{
	mkdir(dst, 0755);
	/* EBUSY: the kernel (e.g. DEVTMPFS_MOUNT) or a previous init did it. */
	if (mount(src, dst, type, MS_NOSUID | MS_NOEXEC, NULL) && errno != EBUSY)
		note("mount %s on %s: %s\n", type, dst, strerror(errno));
}

/*
 * The kernel gives PID 1 /dev/console as fds 0-2 only if the initramfs
 * has that node.  Without it we print into the void, so open the console
 * from devtmpfs ourselves.
 */
static void setup_console(void)
{
	int fd;

	if (fcntl(1, F_GETFD) != -1 && fcntl(2, F_GETFD) != -1)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

static void setup_pid1(void)
{
	mount_one("proc", "/proc", "proc");
	mount_one("sysfs", "/sys", "sysfs");
	/* Not MS_NOEXEC-sensitive, but device nodes need !MS_NODEV. */
	mkdir("/dev", 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, NULL) &&
	    errno != EBUSY)
		note("mount devtmpfs on /dev: %s\n", strerror(errno));
	setup_console();
	/*
	 * The console carries our KTAP; keep routine kernel chatter
	 * (KERN_WARNING and below) off it so no line is split by a printk.
	 * Nothing is lost: the log check reads the whole kernel log.
	 */
	if (klogctl(SYSLOG_ACTION_CONSOLE_LEVEL_PDA, NULL, 4))
		note("cannot lower the console log level: %s\n",
		     strerror(errno));
}

/* Finds pda.timeout=N on the kernel command line. */
static void read_cmdline_timeout(unsigned int *timeout)
{
	char buf[4096], *tok, *save, *end;
	unsigned long v;
	ssize_t n;
	int fd;

	fd = open("/proc/cmdline", O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (strncmp(tok, "pda.timeout=", 12))
			continue;
		errno = 0;
		v = strtoul(tok + 12, &end, 10);
		if (errno || *end || end == tok + 12 || v == 0 || v > INT_MAX / 1000)
			note("ignoring bad %s\n", tok);
		else
			*timeout = v;
	}
}

/* ------------------------------------------------------------ test list */

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/* Returns the sorted names of the executable regular files in @dir. */
static char **list_tests(const char *dir, int *count)
{
	char **names = NULL, path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int n = 0, cap = 0;
	DIR *d;

	*count = 0;
	d = opendir(dir);
	if (!d) {
		note("cannot open %s: %s\n", dir, strerror(errno));
		return NULL;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || ends_with(de->d_name, ".args"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode) ||
		    !(st.st_mode & 0111))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			abort();
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	*count = n;
	return names;
}

/*
 * Builds argv from DIR/NAME.args.  The words point into @buf; there is
 * no quoting, which is enough for option lists like "-r 10 -T s".
 */
static void build_argv(const char *dir, const char *name, char *path,
		       char *buf, char **argv)
{
	char args[PATH_MAX], *tok, *save;
	int fd, argc = 0;
	ssize_t n;

	argv[argc++] = path;
	snprintf(args, sizeof(args), "%s/%s.args", dir, name);
	fd = open(args, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, ARGS_FILE_MAX - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		for (tok = strtok_r(buf, " \t\r\n", &save);
		     tok && argc < MAX_ARGS;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			argv[argc++] = tok;
	}
	argv[argc] = NULL;
}

/* ------------------------------------------------------------ run tests */

/*
 * Copies a test's output to stdout a line at a time, each line indented
 * by 4 spaces so the test's own TAP nests as a KTAP subtest.  Whole lines
 * keep the console readable when a test's stdout and stderr interleave.
 */
struct linebuf {
	char buf[LINE_MAX_LEN];
	size_t len;
};

static void emit_line(struct linebuf *lb)
{
	/* Serial consoles add their own \r; a test's \r would double it. */
	while (lb->len && lb->buf[lb->len - 1] == '\r')
		lb->len--;
	printf("    %.*s\n", (int)lb->len, lb->buf);
	lb->len = 0;
}

static void feed(struct linebuf *lb, const char *data, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (data[i] == '\n') {
			emit_line(lb);
			continue;
		}
		if (lb->len == sizeof(lb->buf))
			emit_line(lb);	/* an over-long line is split */
		lb->buf[lb->len++] = data[i];
	}
	fflush(stdout);
}

/* Reads what is there without blocking; false once the pipe hit EOF. */
static bool drain(int fd, struct linebuf *lb)
{
	char data[4096];
	ssize_t n;

	for (;;) {
		n = read(fd, data, sizeof(data));
		if (n > 0) {
			feed(lb, data, n);
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		return n < 0 && errno == EAGAIN;
	}
}

/*
 * Reaps every exited child: the test, and as PID 1 (or host-mode
 * subreaper) also any orphans the tests left behind.  Returns true once
 * @pid has been reaped and stores its status.
 */
static bool reap(pid_t pid, int *status)
{
	bool found = false;
	pid_t w;
	int st;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
		if (w == pid) {
			*status = st;
			found = true;
		}
	}
	return found;
}

/* The parent PID of a live process; -1 if it is gone or a zombie. */
static pid_t ppid_of(const char *pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and parens. */
	p = strrchr(buf, ')');
	if (!p || strlen(p) < 5 || p[2] == 'Z' || p[2] == 'X')
		return -1;
	return strtol(p + 4, NULL, 10);
}

/*
 * Kills everything the last test left running.  Orphans are reparented
 * to us (PID 1, or the subreaper in host mode), so killing our children
 * round by round reaches every descendant, even ones that changed their
 * process group or session (the kselftest harness puts each TEST in its
 * own group, so killing the test's group alone would miss them).
 * Returns whether there was anything to kill.
 */
static bool kill_leftovers(void)
{
	int round, n, dummy;
	bool killed = false;
	struct dirent *de;
	pid_t self = getpid();
	DIR *d;

	for (round = 0; round < 100; round++) {
		d = opendir("/proc");
		if (!d)
			break;
		n = 0;
		while ((de = readdir(d))) {
			pid_t p;

			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			p = atoi(de->d_name);
			if (p == self || ppid_of(de->d_name) != self)
				continue;
			if (!kill(p, SIGKILL))
				n++;
		}
		closedir(d);
		if (!n)
			break;
		killed = true;
		/*
		 * Let the killed ones die and be reaped, so that their
		 * children are reparented to us before the next round.
		 */
		usleep(20000);
		reap(0, &dummy);
	}
	return killed;
}

enum outcome { RUN_EXITED, RUN_TIMEOUT, RUN_LOST };

static enum outcome run_test(const struct options *o, const char *name,
			     int *status)
{
	char path[PATH_MAX], argsbuf[ARGS_FILE_MAX], *argv[MAX_ARGS + 2];
	long long deadline, drain_until = 0, kill_until = 0;
	bool exited = false, eof = false, timed_out = false;
	struct linebuf *lb;
	struct pollfd pfd;
	int pipefd[2];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	build_argv(o->dir, name, path, argsbuf, argv);

	lb = calloc(1, sizeof(*lb));
	if (!lb || pipe2(pipefd, O_CLOEXEC))
		abort();
	fflush(stdout);

	pid = fork();
	if (pid < 0) {
		note("fork: %s\n", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		free(lb);
		return RUN_LOST;
	}
	if (pid == 0) {
		sigset_t all;
		int null;

		/* Own process group, so a timeout kills the test's children too. */
		setpgid(0, 0);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		null = open("/dev/null", O_RDONLY);
		if (null >= 0 && null != 0) {
			dup2(null, 0);
			close(null);
		}
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		if (chdir(o->dir))
			dprintf(2, "chdir %s: %s\n", o->dir, strerror(errno));
		execv(path, argv);
		dprintf(2, "exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	/* Also from here: the timeout must not race the child's setpgid(). */
	setpgid(pid, pid);
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);

	deadline = now_ms() + o->timeout * 1000LL;
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	for (;;) {
		long long t = now_ms();
		int wait_ms;

		if (!exited && reap(pid, status)) {
			exited = true;
			/*
			 * Whatever the test left running may hold the pipe
			 * open forever, and would disturb the next test.
			 */
			if (kill_leftovers())
				printf("    # pda-init: killed processes %s left behind\n",
				       name);
			drain_until = now_ms() + DRAIN_GRACE_MS;
		}
		if (exited && (eof || t >= drain_until))
			break;
		if (!exited && !timed_out && t >= deadline) {
			timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);	/* in case it left its group */
			kill_until = t + KILL_GRACE_MS;
		}
		if (timed_out && !exited && t >= kill_until)
			break;	/* unkillable (D state); reaped later */

		/*
		 * Poll in slices so that an exit without EOF (a grandchild
		 * holding the pipe) is still noticed promptly.
		 */
		wait_ms = eof ? 10 : 100;
		pfd.fd = eof ? -1 : pipefd[0];
		if (poll(&pfd, 1, wait_ms) > 0 && !eof)
			eof = !drain(pipefd[0], lb);
	}
	if (!exited)
		kill_leftovers();
	if (!eof)
		drain(pipefd[0], lb);
	if (lb->len)
		emit_line(lb);
	fflush(stdout);
	close(pipefd[0]);
	free(lb);
	if (timed_out)
		return RUN_TIMEOUT;
	return exited ? RUN_EXITED : RUN_LOST;
}

static bool report(int k, const char *name, enum outcome r, int status,
		   unsigned int timeout)
{
	const char *sig;

	switch (r) {
	case RUN_TIMEOUT:
		printf("not ok %d %s # TIMEOUT after %u s\n", k, name, timeout);
		return false;
	case RUN_LOST:
		printf("not ok %d %s # could not run\n", k, name);
		return false;
	case RUN_EXITED:
		break;
	}
	if (WIFEXITED(status)) {
		switch (WEXITSTATUS(status)) {
		case 0:
			printf("ok %d %s\n", k, name);
			return true;
		case KSFT_SKIP:
			printf("ok %d %s # SKIP\n", k, name);
			return true;
		default:
			printf("not ok %d %s # exit=%d\n", k, name,
			       WEXITSTATUS(status));
			return false;
		}
	}
	sig = sigabbrev_np(WTERMSIG(status));
	if (sig)
		printf("not ok %d %s # signal=SIG%s\n", k, name, sig);
	else
		printf("not ok %d %s # signal=%d\n", k, name, WTERMSIG(status));
	return false;
}

/* ----------------------------------------------------------- kernel log */

/* Whole ring buffer through syslog(2): no /dev or /proc needed. */
static char *read_klog_all(size_t *len)
{
	int size, n;
	char *buf;

	size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0);
	if (size < KLOG_MIN_SIZE)
		size = KLOG_MIN_SIZE;
	buf = malloc(size + 1);
	if (!buf)
		return NULL;
	n = klogctl(SYSLOG_ACTION_READ_ALL, buf, size);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static char *read_file(const char *path, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The text of every /dev/kmsg record left to read, one line each. */
static char *read_kmsg(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char rec[8192], *buf = malloc(cap);
	const char *text;

	if (!buf)
		return NULL;
	while ((text = klog_next(fd, rec, sizeof(rec)))) {
		size_t tl = strlen(text);

		if (n + tl + 2 > cap) {
			cap = 2 * (n + tl + 2);
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		memcpy(buf + n, text, tl);
		n += tl;
		buf[n++] = '\n';
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static bool check_klog(int k, const struct options *o, int kmsg_fd)
{
	const char *what = "kernel log";
	char *buf, *line, *save;
	int found = 0, trace = 0, traced = 0;
	size_t len;

	if (o->klog_file) {
		what = o->klog_file;
		buf = read_file(o->klog_file, &len);
	} else if (o->pid1) {
		buf = read_klog_all(&len);
	} else if (kmsg_fd >= 0) {
		buf = read_kmsg(kmsg_fd, &len);
	} else {
		/* A host without access to /dev/kmsg has nothing to judge. */
		printf("ok %d kernel_log_clean # SKIP cannot read /dev/kmsg\n", k);
		return true;
	}
	if (!buf) {
		printf("    # cannot read %s: %s\n", what, strerror(errno));
		printf("not ok %d kernel_log_clean\n", k);
		return false;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!klog_is_splat(line)) {
			/* The splat's trace, so the log shows where it was. */
			if (trace > 0 && traced < KLOG_TRACE_TOTAL) {
				trace--;
				traced++;
				printf("    | %s\n", line);
			}
			if (strstr(line, "---[ end trace"))
				trace = 0;
			continue;
		}
		trace = 0;
		if (found++ < KLOG_MAX_REPORT) {
			printf("    %s\n", line);
			trace = KLOG_TRACE_LINES;
		}
	}
	free(buf);
	if (found > KLOG_MAX_REPORT)
		printf("    # ... %d more\n", found - KLOG_MAX_REPORT);
	if (found) {
		printf("    # %d suspicious line(s) in the %s\n", found, what);
		printf("not ok %d kernel_log_clean\n", k);
		return false;
	}
	printf("ok %d kernel_log_clean\n", k);
	return true;
}

/* ----------------------------------------------------------------- main */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --dir DIR [--timeout S] [--no-reboot] [--klog FILE]\n"
		"As PID 1 it takes no arguments and runs " TESTS_DIR ".\n",
		prog);
	exit(2);
}

static void parse_args(int argc, char **argv, struct options *o)
{
	char *end;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-reboot")) {
			o->reboot = false;
		} else if (i + 1 >= argc) {
			usage(argv[0]);
		} else if (!strcmp(argv[i], "--dir")) {
			o->dir = argv[++i];
		} else if (!strcmp(argv[i], "--klog")) {
			o->klog_file = argv[++i];
		} else if (!strcmp(argv[i], "--timeout")) {
			o->timeout = strtoul(argv[++i], &end, 10);
			if (*end || !o->timeout || o->timeout > INT_MAX / 1000)
				usage(argv[0]);
		} else {
			usage(argv[0]);
		}
	}
}

static void __attribute__((noreturn)) finish_pid1(bool do_reboot)
{
	printf("# pda-init: done\n");
	fflush(stdout);
	/* A slow emulated UART (Bochs) still holds our last lines. */
	tcdrain(STDOUT_FILENO);
	sleep(1);
	sync();
	if (do_reboot) {
		reboot(RB_AUTOBOOT);
		printf("# pda-init: reboot: %s; powering off\n", strerror(errno));
		fflush(stdout);
		reboot(RB_POWER_OFF);
		printf("# pda-init: power off: %s\n", strerror(errno));
		fflush(stdout);
	}
	/* PID 1 must not exit: that panics the kernel. */
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct options o = {
		.dir = TESTS_DIR,
		.timeout = DEFAULT_TIMEOUT,
		.pid1 = getpid() == 1,
		.reboot = true,
	};
	bool all_ok = true;
	int i, n, kmsg_fd = -1;
	char **names, *abs_dir;

	if (o.pid1) {
		/*
		 * Kernel command line words the kernel did not understand
		 * land in our argv: ignore them.
		 */
		setup_pid1();
		read_cmdline_timeout(&o.timeout);
	} else {
		parse_args(argc, argv, &o);
		/* Orphans of the tests come to us, as they would to PID 1. */
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		if (!o.klog_file)
			kmsg_fd = klog_open();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Tests run with DIR as their cwd, so their path must not be relative. */
	abs_dir = realpath(o.dir, NULL);
	if (abs_dir)
		o.dir = abs_dir;

	printf("KTAP version 1\n");
	names = list_tests(o.dir, &n);
	if (!names && n == 0 && access(o.dir, R_OK | X_OK))
		all_ok = false;
	printf("1..%d\n", n + 1);
	printf("# pda-init: %d test(s) in %s, timeout %u s each\n", n, o.dir,
	       o.timeout);
	for (i = 0; i < n; i++) {
		long long t0 = now_ms();
		enum outcome r;
		int status = 0;

		r = run_test(&o, names[i], &status);
		printf("# %s: %.1f s\n", names[i], (now_ms() - t0) / 1000.0);
		all_ok &= report(i + 1, names[i], r, status, o.timeout);
		free(names[i]);
	}
	free(names);
	all_ok &= check_klog(n + 1, &o, kmsg_fd);

	if (o.pid1)
		finish_pid1(o.reboot);
	printf("# pda-init: done\n");
	return all_ok ? 0 : 1;
}
