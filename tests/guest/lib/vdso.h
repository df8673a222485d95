/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finds a versioned function symbol in the vDSO the kernel mapped into
 * this process, by walking the vDSO's own ELF dynamic section: the same
 * lookup a dynamic linker does, but usable from static test programs,
 * which is all the guest has.
 *
 *	long (*getcpu)(unsigned int *, unsigned int *, void *);
 *	getcpu = vdso_sym("LINUX_2.6", "__vdso_getcpu");
 *
 * Header only: each test is one C file.
 */
#ifndef PDA_TESTS_VDSO_H
#define PDA_TESTS_VDSO_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

/* The vDSO has the word size of the process it is mapped into. */
#if __SIZEOF_POINTER__ == 8
#define VDSO_ELF(type)	Elf64_##type
#define VDSO_ST_TYPE(i)	ELF64_ST_TYPE(i)
#define VDSO_ST_BIND(i)	ELF64_ST_BIND(i)
#else
#define VDSO_ELF(type)	Elf32_##type
#define VDSO_ST_TYPE(i)	ELF32_ST_TYPE(i)
#define VDSO_ST_BIND(i)	ELF32_ST_BIND(i)
#endif

/* Number of dynamic symbols: DT_HASH says it; DT_GNU_HASH must be walked. */
static inline size_t vdso_nsyms(const uint32_t *hash, const uint32_t *gnu_hash)
{
	const uint32_t *buckets, *chain;
	uint32_t nbuckets, symoffset, maxsym = 0, i;

	if (hash)
		return hash[1];	/* nchain */
	if (!gnu_hash)
		return 0;
	nbuckets = gnu_hash[0];
	symoffset = gnu_hash[1];
	/* Skip the header and the bloom filter (bloom_size words of ELFCLASS size). */
	buckets = (const uint32_t *)((const char *)(gnu_hash + 4) +
				     gnu_hash[2] * sizeof(VDSO_ELF(Addr)));
	chain = buckets + nbuckets;
	for (i = 0; i < nbuckets; i++)
		if (buckets[i] > maxsym)
			maxsym = buckets[i];
	if (maxsym < symoffset)
		return symoffset;
	/* The last chain ends at the entry with bit 0 set. */
	while (!(chain[maxsym - symoffset] & 1))
		maxsym++;
	return maxsym + 1;
}

/* Does version index @ndx of the vDSO's version definitions name @version? */
static inline int vdso_version_is(const VDSO_ELF(Verdef) *def,
				  const char *strtab, unsigned int ndx,
				  const char *version)
{
	for (;;) {
		if (!(def->vd_flags & VER_FLG_BASE) &&
		    (def->vd_ndx & 0x7fff) == ndx) {
			const VDSO_ELF(Verdaux) *aux = (const void *)
				((const char *)def + def->vd_aux);

			return !strcmp(strtab + aux->vda_name, version);
		}
		if (!def->vd_next)
			return 0;
		def = (const void *)((const char *)def + def->vd_next);
	}
}

/*
 * Returns the address of function @name with version @version (NULL: any
 * version) in this process's vDSO, or NULL if there is no vDSO or no such
 * symbol.
 */
static inline void *vdso_sym(const char *version, const char *name)
{
	const VDSO_ELF(Ehdr) *eh;
	const VDSO_ELF(Phdr) *ph;
	const VDSO_ELF(Dyn) *dyn = NULL, *d;
	const VDSO_ELF(Sym) *symtab = NULL;
	const VDSO_ELF(Verdef) *verdef = NULL;
	const VDSO_ELF(Versym) *versym = NULL;
	const uint32_t *hash = NULL, *gnu_hash = NULL;
	const char *strtab = NULL;
	uintptr_t base, load_offset = 0;
	int have_load = 0;
	size_t i, n;

	base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return NULL;
	eh = (const void *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;

	/*
	 * Addresses inside the image are link-time virtual addresses;
	 * the first PT_LOAD says how they map onto where the image is.
	 */
	ph = (const void *)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			load_offset = base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const void *)(base + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return NULL;

	for (d = dyn; d->d_tag != DT_NULL; d++) {
		uintptr_t p = load_offset + d->d_un.d_ptr;

		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = (const void *)p;
			break;
		case DT_STRTAB:
			strtab = (const void *)p;
			break;
		case DT_HASH:
			hash = (const void *)p;
			break;
		case DT_GNU_HASH:
			gnu_hash = (const void *)p;
			break;
		case DT_VERSYM:
			versym = (const void *)p;
			break;
		case DT_VERDEF:
			verdef = (const void *)p;
			break;
		}
	}
	if (!symtab || !strtab)
		return NULL;
	/* Without version information a versioned lookup cannot succeed. */
	if (version && (!versym || !verdef))
		return NULL;

	n = vdso_nsyms(hash, gnu_hash);
	for (i = 0; i < n; i++) {
		const VDSO_ELF(Sym) *sym = &symtab[i];

		if (VDSO_ST_TYPE(sym->st_info) != STT_FUNC ||
		    sym->st_shndx == SHN_UNDEF ||
		    (VDSO_ST_BIND(sym->st_info) != STB_GLOBAL &&
		     VDSO_ST_BIND(sym->st_info) != STB_WEAK))
			continue;
		if (strcmp(strtab + sym->st_name, name))
			continue;
		if (version && !vdso_version_is(verdef, strtab,
						versym[i] & 0x7fff, version))
			continue;
		return (void *)(load_offset + sym->st_value);
	}
	return NULL;
}

#endif /* PDA_TESTS_VDSO_H */
