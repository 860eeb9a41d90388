/* SPDX-License-Identifier: MIT */
/*
 * ELF symbols, for addresses no DWARF function covers: .symtab, else
 * MiniDebugInfo's (.gnu_debugdata, an xz-compressed ELF), else .dynsym,
 * each naming addresses of its own allocated section only; and the
 * PT_LOAD segments that turn file offsets into addresses.  libelf only.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#define MINIDEBUG_MAX (64u << 20) /* decompressed .gnu_debugdata */
#define NULL_SYMS_MAX 4096u /* all-zero symbols in a row that end a table */

/* ------------------------------------------------------------ ELF symbols */

/* Allocated sections: a symbol names an address only in its own section
 * (binutils' rule). */
static int read_sections(struct sym_build *B, Elf *elf)
{
	Elf_Scn *scn = NULL;

	B->nsecs = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		if (GROW(B, secs, nsecs, seccap))
			return -ENOMEM;
		B->secs[B->nsecs].lo = sh.sh_addr;
		B->secs[B->nsecs].hi = sh.sh_addr + sh.sh_size;
		B->secs[B->nsecs].shndx = (uint32_t)elf_ndxscn(scn);
		B->secs[B->nsecs].pad = 0;
		B->nsecs++;
	}
	return 0;
}

/* Only entry 0 of a symbol table is all zeros; a run of NULL_SYMS_MAX
 * such entries is a hole, not symbols, and ends the table: a 4 GiB .symtab
 * of zeros was 178 million entries read, 15 s and every page of it
 * resident. */
static bool null_sym(const GElf_Sym *sym)
{
	return !sym->st_name && !sym->st_info && !sym->st_other && !sym->st_shndx &&
	       !sym->st_value && !sym->st_size;
}

int ds__symtab_add(struct ds_context *ctx, const char *elf_name, struct sym_build *B, Elf *elf,
		   Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	int added = 0;

	if (read_sections(B, elf))
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n, nulls = 0;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		/* binutils names the file of a symbol after the last STT_FILE
		 * before it: always for a local, for a global only if no other
		 * symbol came between the file symbol and the start. */
		uint32_t file = 0;
		enum { NOTHING, SYMBOL, FILE_AFTER_SYMBOL } state = NOTHING;

		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			int st;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (null_sym(&sym)) {
				if (++nulls < NULL_SYMS_MAX)
					continue;
				ds_debug(ctx,
					 "%s: %s: %u null symbols in a row up to entry %zu: the "
					 "other %zu entries are not read",
					 elf_name, type == SHT_DYNSYM ? ".dynsym" : ".symtab",
					 NULL_SYMS_MAX, i, n - i - 1);
				break;
			}
			nulls = 0;
			st = GELF_ST_TYPE(sym.st_info);
			if (st == STT_FILE) {
				file =
				    ds__symbols_intern(B, elf_strptr(elf, sh.sh_link, sym.st_name));
				if (state == SYMBOL)
					state = FILE_AFTER_SYMBOL;
				continue;
			}
			if (state == NOTHING && i > 0)
				state = SYMBOL;
			if ((st != STT_FUNC && st != STT_GNU_IFUNC && st != STT_NOTYPE) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name || (st == STT_NOTYPE && name[0] == '.'))
				continue;
			if (st == STT_NOTYPE && !strncmp(name, "$", 1))
				continue; /* mapping symbols */
			if (GROW(B, syms, nsyms, symcap))
				return -ENOMEM;
			B->syms[B->nsyms].lo = sym.st_value;
			B->syms[B->nsyms].size = sym.st_size;
			B->syms[B->nsyms].name = ds__symbols_intern(B, name);
			B->syms[B->nsyms].shndx = sym.st_shndx;
			B->syms[B->nsyms].order = (uint32_t)B->nsyms & ((1u << 30) - 1);
			B->syms[B->nsyms].bind = GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? SYM_GLOBAL
						 : GELF_ST_BIND(sym.st_info) == STB_WEAK ? SYM_WEAK
											   : SYM_LOCAL;
			B->syms[B->nsyms].file = GELF_ST_BIND(sym.st_info) == STB_LOCAL ||
							 state != FILE_AFTER_SYMBOL
						 ? file
						 : 0;
			B->nsyms++;
			added++;
		}
	}
	return added;
}

/* MiniDebugInfo: an xz-compressed ELF holding a .symtab. */
int ds__symtab_add_minidebuginfo(struct ds_context *ctx, const char *elf_name, struct sym_build *B,
				 Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;
		uint64_t memlimit = 256u << 20;
		size_t in_pos = 0, out_pos = 0, out_cap = 1 << 20;
		unsigned char *out = NULL;
		lzma_ret ret;
		Elf *mini;
		int added;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debugdata"))
			continue;
		data = elf_rawdata(scn, NULL);
		if (!data || !data->d_size)
			return 0;
		/* Grow the output until it fits; bounded. */
		for (;;) {
			unsigned char *nb = realloc(out, out_cap);

			if (!nb) {
				free(out);
				return -ENOMEM;
			}
			out = nb;
			in_pos = out_pos = 0;
			ret = lzma_stream_buffer_decode(&memlimit, 0, NULL, data->d_buf, &in_pos,
							data->d_size, out, &out_pos, out_cap);
			if (ret != LZMA_BUF_ERROR || out_cap >= MINIDEBUG_MAX)
				break;
			out_cap *= 4;
		}
		if (ret != LZMA_OK) {
			free(out);
			return 0; /* not xz, or corrupt: no names from it */
		}
		mini = elf_memory((char *)out, out_pos);
		added = mini ? ds__symtab_add(ctx, elf_name, B, mini, SHT_SYMTAB) : 0;
		if (mini)
			elf_end(mini);
		free(out);
		return added;
	}
	return 0;
}

int ds__symtab_read_segments(struct sym_build *B, Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0 || !phnum)
		return 0;
	free(B->segs);
	B->nsegs = 0;
	B->segs = calloc(phnum, sizeof(*B->segs));
	if (!B->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			B->segs[B->nsegs].offset = ph.p_offset;
			B->segs[B->nsegs].filesz = ph.p_filesz;
			B->segs[B->nsegs].vaddr = ph.p_vaddr;
			B->nsegs++;
		}
	}
	return 0;
}
