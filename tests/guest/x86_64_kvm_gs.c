// SPDX-License-Identifier: GPL-2.0
/*
 * A virtual machine monitor thread that holds the PDA selector in %gs
 * keeps its CPU's base across KVM_RUN (patch 0008).  KVM saves the host's
 * segment state before it enters the guest and restores it on the way
 * out; VMX writes a saved %gs base back after reloading the selector, so
 * a base saved wrong shows right after the exit, before any context
 * switch could reload it.
 *
 * The target names the extension on the command line, pda.kvm=svm or
 * pda.kvm=vmx: then the CPU must report it and KVM must run, no skip.
 * QEMU's TCG emulates AMD's SVM (VMSAVE/VMLOAD restore the bases); the
 * bochs-vmx target runs Intel's VMX in Bochs, on a CPU without FSGSBASE.
 *
 * - exit_keeps_base: pinned on each online CPU in turn, a vCPU that exits
 *   to user space at every OUT instruction; after each KVM_RUN the
 *   thread still holds the selector, ARCH_GET_GS is this CPU's base, a
 *   read through %gs names this CPU (checked against sched_getcpu()), and
 *   an increment through %gs lands in this CPU's slot.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "lib/cmdline.h"
#include "lib/cpuinfo.h"
#include "lib/pda_test.h"

#define GUEST_PHYS	0x1000
#define GUEST_PORT	0x10
#define RUNS_PER_CPU	64

/* Real mode, at GUEST_PHYS: out %al, $GUEST_PORT; jmp back to the out. */
static const uint8_t guest_code[] = { 0xe6, GUEST_PORT, 0xeb, 0xfc };

static PDA_DEFINE_SLOTS(counters);

static void count_on_this_cpu(void)
{
	asm volatile("addl $1, %%gs:%0" : "+m" (counters[0].u32[0]));
}

FIXTURE(vmm) {
	int kvm, vm, vcpu;
	struct kvm_run *run;
	size_t run_size;
	void *mem;
	int cpus[CPU_SETSIZE];
	int n;
};

FIXTURE_SETUP(vmm)
{
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = GUEST_PHYS,
		.memory_size = 0x1000,
	};
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = GUEST_PHYS, .rflags = 0x2 };
	char ext[8];
	int size;

	self->vm = self->vcpu = -1;
	self->run = MAP_FAILED;
	self->n = pda_test_online(self->cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->n);
	ASSERT_EQ(0, pda_init_thread()) {
		TH_LOG("no user per-CPU segment: %s", strerror(errno));
	}
	ASSERT_EQ(PDA_USER_SELECTOR, pda_read_seg());

	self->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (!cmdline_get("pda.kvm", ext, sizeof(ext))) {
		ASSERT_EQ(1, cpuinfo_flag(ext)) {
			TH_LOG("the target declares pda.kvm=%s; the CPU does not report it",
			       ext);
		}
		ASSERT_LE(0, self->kvm) {
			TH_LOG("pda.kvm=%s but no /dev/kvm: %s", ext,
			       strerror(errno));
		}
		TH_LOG("KVM on %s", ext);
	}
	if (self->kvm < 0)
		SKIP(return, "no /dev/kvm (%s): the kernel has no KVM, or the CPU model no SVM or VMX",
		     strerror(errno));
	ASSERT_EQ(KVM_API_VERSION, ioctl(self->kvm, KVM_GET_API_VERSION, 0));
	self->vm = ioctl(self->kvm, KVM_CREATE_VM, 0);
	ASSERT_LE(0, self->vm) TH_LOG("KVM_CREATE_VM: %s", strerror(errno));

	self->mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	memcpy(self->mem, guest_code, sizeof(guest_code));
	region.userspace_addr = (uintptr_t)self->mem;
	ASSERT_EQ(0, ioctl(self->vm, KVM_SET_USER_MEMORY_REGION, &region));

	self->vcpu = ioctl(self->vm, KVM_CREATE_VCPU, 0);
	ASSERT_LE(0, self->vcpu) TH_LOG("KVM_CREATE_VCPU: %s", strerror(errno));
	size = ioctl(self->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	ASSERT_LT(0, size);
	self->run_size = size;
	self->run = mmap(NULL, self->run_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, self->vcpu, 0);
	ASSERT_NE(MAP_FAILED, self->run);

	ASSERT_EQ(0, ioctl(self->vcpu, KVM_GET_SREGS, &sregs));
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	ASSERT_EQ(0, ioctl(self->vcpu, KVM_SET_SREGS, &sregs));
	ASSERT_EQ(0, ioctl(self->vcpu, KVM_SET_REGS, &regs));
}

FIXTURE_TEARDOWN(vmm)
{
	pda_test_unpin();
	if (self->run != MAP_FAILED)
		munmap(self->run, self->run_size);
	if (self->vcpu >= 0)
		close(self->vcpu);
	if (self->vm >= 0)
		close(self->vm);
	if (self->kvm >= 0)
		close(self->kvm);
}

TEST_F(vmm, exit_keeps_base)
{
	int i, r, bad = 0, runs = 0;

	for (i = 0; i < self->n; i++) {
		int cpu = self->cpus[i];
		unsigned int before;

		ASSERT_EQ(0, pda_test_pin(cpu));
		before = counters[cpu].u32[0];
		for (r = 0; r < RUNS_PER_CPU; r++) {
			unsigned long base;
			int seg, sched;

			ASSERT_EQ(0, ioctl(self->vcpu, KVM_RUN, 0)) {
				TH_LOG("KVM_RUN on CPU %d: %s", cpu,
				       strerror(errno));
			}
			/*
			 * Through %gs first: a context switch, which the
			 * ARCH_GET_GS call could bring, reloads the base.
			 */
			seg = pda_cpu_raw();
			count_on_this_cpu();
			base = pda_test_gs_base();
			sched = sched_getcpu();
			ASSERT_EQ(KVM_EXIT_IO, self->run->exit_reason);
			ASSERT_EQ(GUEST_PORT, self->run->io.port);
			ASSERT_EQ(KVM_EXIT_IO_OUT, self->run->io.direction);
			runs++;
			if (pda_read_seg() != PDA_USER_SELECTOR ||
			    base != (unsigned long)cpu << PDA_USER_SHIFT ||
			    seg != cpu || sched != cpu) {
				if (bad++ < 8)
					TH_LOG("CPU %d run %d: %%gs %#x base %#lx, segment %d, sched_getcpu %d",
					       cpu, r, pda_read_seg(), base,
					       seg, sched);
			}
		}
		EXPECT_EQ(before + RUNS_PER_CPU, counters[cpu].u32[0]) {
			TH_LOG("CPU %d's slot missed increments", cpu);
		}
	}
	TH_LOG("%d exits on %d CPUs, %d with a wrong base", runs, self->n,
	       bad);
	EXPECT_EQ(0, bad);
}

TEST_HARNESS_MAIN
