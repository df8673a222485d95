// SPDX-License-Identifier: GPL-2.0
/*
 * Tearing an address space down frees its page tables, and another CPU
 * that ran the address space earlier may still cache walks through them
 * (its walk cache is tagged by ASID, not by TTBR).  So the flush before
 * the free must reach every CPU, even when no CPU holds the mm any more.
 * On arm64 with CONFIG_ARM64_TLBI_LOCAL that flush is flush_tlb_mm() in
 * tlb_flush(), and it must stay a broadcast: no teardown is ever local or
 * skipped.
 *
 * Each round: a child touches 4 MiB on CPU b (its page tables now sit in
 * b's walk cache), moves to CPU a, and lets an occupier process run on
 * every other CPU, so that b no longer holds the mm.  Then
 * - exec_broadcasts: it execs a 132-byte image with no C library that
 *   only calls exit(): exec switches a to the new mm before it drops the
 *   old one, so the old mm is torn down with no user and no CPU holding
 *   it, and the image's own mm is torn down at its exit;
 * - exit_broadcasts: it calls _exit(): its mm is torn down on a.
 *
 * The counters of /proc/vmstat are read by the child just before it
 * execs or exits, and by the parent once the child is gone.  Nothing but
 * the teardowns flushes a user TLB in that window: parent and child
 * first write every page they write in the window, so that no
 * copy-on-write fault from the fork lands there, and the parent waits
 * with waitid() without a siginfo to fill in; the occupiers are blocked;
 * the exec'd image touches no memory; and it runs with ADDR_NO_RANDOMIZE,
 * so exec builds its stack where it stays (setup_arg_pages() moves a
 * randomized stack down, and that move flushes once or twice, as the
 * random offset falls).  So with tlbi_local=on each window must show
 * tlbi_local and tlbi_skipped unchanged and at least one broadcast per
 * teardown in every round: a kernel that takes a teardown locally or
 * skips it fails the first round.  The kernel must also say it is on, or
 * the run proves nothing about the skip.  Off, the flushes take
 * mainline's path and count nothing: every counter stays unchanged.
 *
 * pda.scale=N multiplies the rounds.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/rseq.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/tlb_test.h"

#ifndef __aarch64__
#error "tlb_exec_exit's image is arm64 code: built for ARCH=arm64 only"
#endif

#define ROUNDS		8
#define TOUCH_BYTES	(4UL << 20)
/* The stack a process may write in a window: written before it. */
#define WINDOW_STACK	(64 * 1024)

enum child_exit {
	CHILD_OK, CHILD_MOVE, CHILD_MMAP, CHILD_OCCUPY, CHILD_PERSONALITY,
	CHILD_EXEC
};

static const char *const child_says[] = {
	"ok", "could not pin itself", "mmap failed",
	"the occupiers did not run", "personality() failed",
	"execve() failed",
};

/* The image: mov x0, #0; mov x8, #93 (__NR_exit); svc #0. */
static const uint32_t image_code[] = { 0xd2800000, 0xd2800ba8, 0xd4000001 };
#define IMAGE_VADDR	0x400000UL

/* An ELF executable of one PT_LOAD segment holding image_code. */
static int image_fd(void)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		uint32_t code[3];
	} __attribute__((packed)) img = {
		.eh = {
			.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3,
				     ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
				     ELFOSABI_SYSV },
			.e_type = ET_EXEC,
			.e_machine = EM_AARCH64,
			.e_version = EV_CURRENT,
			.e_entry = IMAGE_VADDR + offsetof(typeof(img), code),
			.e_phoff = offsetof(typeof(img), ph),
			.e_ehsize = sizeof(Elf64_Ehdr),
			.e_phentsize = sizeof(Elf64_Phdr),
			.e_phnum = 1,
		},
		.ph = {
			.p_type = PT_LOAD,
			.p_flags = PF_R | PF_X,
			.p_vaddr = IMAGE_VADDR,
			.p_paddr = IMAGE_VADDR,
			.p_filesz = sizeof(img),
			.p_memsz = sizeof(img),
			.p_align = 0x10000,
		},
	};
	int fd = memfd_create("tlb_exec_exit_image", 0);

	memcpy(img.code, image_code, sizeof(image_code));
	if (fd < 0)
		return -1;
	if (write(fd, &img, sizeof(img)) != sizeof(img)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* MAP_SHARED between the parent and the child of a round. */
struct window {
	uint32_t go;			/* futex: the parent is ready */
	struct tlb_vmstat before;	/* the child's read */
};

FIXTURE(teardown) {
	struct tlb_env env;
	struct window *win;
	int image;
};

FIXTURE_SETUP(teardown)
{
	char why[256];

	self->win = NULL;
	self->image = -1;
	if (tlb_env_init(&self->env, 0, why, sizeof(why)))
		SKIP(return, "%s", why);
	if (self->env.ncpus < 2)
		SKIP(return, "needs two CPUs, has %d", self->env.ncpus);
	self->win = tlb_shared(sizeof(*self->win));
	ASSERT_NE(NULL, self->win);
	self->image = image_fd();
	ASSERT_LE(0, self->image) TH_LOG("memfd: %s", strerror(errno));
}

FIXTURE_TEARDOWN(teardown)
{
	char why[256];

	if (self->image >= 0)
		close(self->image);
	if (self->win)
		munmap(self->win, sizeof(*self->win));
	if (self->env.nocc && tlb_env_fini(&self->env, why, sizeof(why)))
		TH_LOG("teardown: %s", why);
}

/*
 * A process's writes in the window: the counters' buffer, the stack its
 * calls use, and its rseq area, which the kernel writes on the way back
 * to user space after the process slept (glibc registers rseq for every
 * thread).  A fork write-protects the private pages of parent and child;
 * the first write to one afterwards copies or reuses it, and either
 * flushes that TLB entry of the writer's mm.  Writing them before the
 * child reads the counters keeps those flushes out of the window.
 */
static void __attribute__((noinline)) prewrite(struct tlb_vmstat *scratch)
{
	volatile char stack[WINDOW_STACK];

	memset((char *)stack, 0, sizeof(stack));
	tlb_vmstat_read(scratch);
	if (__rseq_size) {
		struct rseq *rs = (struct rseq *)
			((char *)__builtin_thread_pointer() + __rseq_offset);

		/* 0 already: no critical section is running. */
		__atomic_store_n(&rs->rseq_cs, 0, __ATOMIC_RELAXED);
	}
}

/*
 * The child of one round: see the top of the file.  @image < 0: exit
 * instead of exec.
 */
static void __attribute__((noreturn))
round_child(struct tlb_env *e, struct window *w, int image)
{
	char *argv[] = { "tlb_exec_exit_image", NULL }, *envp[] = { NULL };
	struct tlb_vmstat scratch;
	size_t off;
	char *p;

	if (tlb_move(e, e->cpus[1]))
		_exit(CHILD_MOVE);
	p = mmap(NULL, TOUCH_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(CHILD_MMAP);
	for (off = 0; off < TOUCH_BYTES; off += e->page)
		p[off] = 1;
	if (tlb_move(e, e->cpus[0]))
		_exit(CHILD_MOVE);
	if (tlb_occupy(e, e->cpus[0]))
		_exit(CHILD_OCCUPY);
	if (image >= 0 && personality(PER_LINUX | ADDR_NO_RANDOMIZE) < 0)
		_exit(CHILD_PERSONALITY);
	while (!__atomic_load_n(&w->go, __ATOMIC_ACQUIRE))
		tlb_futex_wait(&w->go, 0, 1);
	prewrite(&scratch);
	tlb_vmstat_read(&w->before);
	if (image < 0)
		_exit(CHILD_OK);
	fexecve(image, argv, envp);
	_exit(CHILD_EXEC);
}

/*
 * One round of each kind: the counters' growth in the window, and the
 * child's exit status checked.
 */
static void one_round(struct __test_metadata *_metadata,
		      FIXTURE_DATA(teardown) *self, int exec,
		      struct tlb_vmstat *before, struct tlb_vmstat *after)
{
	struct window *w = self->win;
	siginfo_t info;
	int status;
	pid_t pid;

	w->go = 0;
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		round_child(&self->env, w, exec ? self->image : -1);
	prewrite(after);
	__atomic_store_n(&w->go, 1, __ATOMIC_RELEASE);
	tlb_futex_wake(&w->go, 1);
	ASSERT_EQ(0, waitid(P_PID, pid, NULL, WEXITED | WNOWAIT));
	tlb_vmstat_read(after);
	*before = w->before;
	/* Reaped only now: waitid() above wrote no siginfo. */
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED));
	ASSERT_EQ(CLD_EXITED, info.si_code);
	status = info.si_status;
	ASSERT_EQ(CHILD_OK, status) {
		TH_LOG("round %ld: the child %s", self->env.round,
		       status < (int)(sizeof(child_says) / sizeof(*child_says)) ?
		       child_says[status] : "failed");
	}
}

static void run_rounds(struct __test_metadata *_metadata,
		       FIXTURE_DATA(teardown) *self, int exec)
{
	const char *what = exec ? "exec after a move, the old CPU occupied" :
				  "exit after a move, the old CPU occupied";
	/*
	 * The broadcasts a window must hold, with the option on: exit's
	 * teardown; exec's two, the old mm and then the image's at its exit.
	 */
	const unsigned long long teardowns = exec ? 2 : 1;
	const int on = tlb_local_on();
	const unsigned long long want = on ? teardowns : 0;
	long r, rounds = tlb_rounds(ROUNDS), bad = 0;
	struct tlb_vmstat first, last;
	char says[160];

	tlb_vmstat_read(&first);
	ASSERT_EQ(TLB_VM_NR, first.present) {
		TH_LOG("no tlbi_* counters in /proc/vmstat: a kernel without CONFIG_ARM64_TLBI_LOCAL or VM_EVENT_COUNTERS");
	}
	if (on) {
		ASSERT_NE(NULL, strstr(tlb_kernel_says(says, sizeof(says)),
				       "tlbi_local: on")) {
			TH_LOG("booted with tlbi_local=on, but the kernel said: %s",
			       says);
		}
	}
	for (r = 0; r < rounds; r++) {
		struct tlb_vmstat before, after;

		self->env.round = r;
		one_round(_metadata, self, exec, &before, &after);
		if (tlb_vm_delta(&before, &after, TLB_VM_LOCAL) ||
		    tlb_vm_delta(&before, &after, TLB_VM_SKIPPED) ||
		    tlb_vm_delta(&before, &after, TLB_VM_BCAST) < want ||
		    (!on && (tlb_vm_delta(&before, &after, TLB_VM_BCAST) ||
			     tlb_vm_delta(&before, &after, TLB_VM_CATCHUP)))) {
			if (bad++ < 4)
				TLB_VMSTAT_PRINT("a teardown window", &before,
						 &after);
		}
	}
	tlb_vmstat_read(&last);
	TLB_EXPECT_NO_FAILURES(&self->env);
	TLB_VMSTAT_PRINT(what, &first, &last);
	EXPECT_EQ(0, bad) {
		if (on)
			TH_LOG("%ld of %ld rounds: a teardown was local or skipped, or fewer than %llu broadcasts",
			       bad, rounds, teardowns);
		else
			TH_LOG("%ld of %ld rounds counted flushes with tlbi_local off",
			       bad, rounds);
	}
}

TEST_F_TIMEOUT(teardown, exec_broadcasts, TLB_TIMEOUT)
{
	run_rounds(_metadata, self, 1);
}

TEST_F_TIMEOUT(teardown, exit_broadcasts, TLB_TIMEOUT)
{
	run_rounds(_metadata, self, 0);
}

TEST_HARNESS_MAIN
