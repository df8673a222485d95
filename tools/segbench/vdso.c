// SPDX-License-Identifier: GPL-2.0
/*
 * Find a symbol in the vDSO the kernel maps into every process.
 *
 * A static binary has no dynamic loader to do this, so walk the ELF image
 * at AT_SYSINFO_EHDR ourselves: program headers give the load bias and the
 * dynamic section, the dynamic section gives the symbol and string tables,
 * and DT_HASH gives the number of symbols. Versions are not checked: every
 * vDSO that has __vdso_getcpu has exactly one.
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include "segbench.h"

void *sb_vdso_sym(const char *name)
{
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *dyn = NULL, *d;
	const ElfW(Sym) *sym = NULL;
	const ElfW(Word) *hash = NULL;
	const char *str = NULL;
	uintptr_t base, bias = 0;
	int i, have_load = 0;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;
	base = (uintptr_t)eh;
	ph = (const void *)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			bias = base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const void *)(base + ph[i].p_offset);
		}
	}
	if (!dyn || !have_load)
		return NULL;
	for (d = dyn; d->d_tag != DT_NULL; d++) {
		uintptr_t p = bias + d->d_un.d_ptr;

		if (d->d_tag == DT_SYMTAB)
			sym = (const void *)p;
		else if (d->d_tag == DT_STRTAB)
			str = (const void *)p;
		else if (d->d_tag == DT_HASH)
			hash = (const void *)p;
	}
	if (!sym || !str || !hash)
		return NULL;
	/* DT_HASH: nbucket, nchain; nchain is the number of symbols. */
	for (i = 0; i < (int)hash[1]; i++) {
		if (sym[i].st_shndx == SHN_UNDEF || !sym[i].st_value)
			continue;
		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC)
			continue;
		if (!strcmp(str + sym[i].st_name, name))
			return (void *)(bias + sym[i].st_value);
	}
	return NULL;
}
