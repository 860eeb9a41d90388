/* SPDX-License-Identifier: MIT */
/* An ELF file's loadable segments: what turns a file offset into an ELF
 * virtual address, for the store (a DSO known by its debuginfo alone keeps
 * its executable's), the symbolizer and the live-process normalizer. */
#define _GNU_SOURCE
#include "elfinfo.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ loadmap */

#define LOADMAP_MAX_SEGS 4096u /* phnum beyond this: not a real binary */

int ds__loadmap_read(Elf *elf, struct ds__loadmap **out)
{
	struct ds__loadmap *lm;
	size_t phnum;

	*out = NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum) != 0)
		return -ENOEXEC;
	if (phnum > LOADMAP_MAX_SEGS)
		return -ENOEXEC;
	lm = calloc(1, sizeof(*lm) + (phnum ? phnum : 1) * sizeof(lm->seg[0]));
	if (!lm)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		lm->seg[lm->n++] = (struct ds__loadseg){ ph.p_offset, ph.p_filesz, ph.p_vaddr,
							 ph.p_memsz, ph.p_flags };
	}
	if (!lm->n) {
		free(lm);
		return -ENODATA;
	}
	*out = lm;
	return 0;
}

int ds__loadmap_vaddr(const struct ds__loadmap *lm, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < lm->n; i++) {
		const struct ds__loadseg *sg = &lm->seg[i];

		if (offset >= sg->offset && offset - sg->offset < sg->filesz) {
			*vaddr = offset - sg->offset + sg->vaddr;
			return 0;
		}
	}
	return -ERANGE;
}

bool ds__loadmap_stripped(Elf *elf)
{
	struct ds__loadmap *lm;
	bool stripped = false;

	if (ds__loadmap_read(elf, &lm))
		return false;
	for (size_t i = 0; i < lm->n; i++)
		if ((lm->seg[i].flags & PF_X) && !lm->seg[i].filesz && lm->seg[i].memsz)
			stripped = true;
	free(lm);
	return stripped;
}

