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
#include <inttypes.h>
#include <lzma.h>
#include <stdio.h>
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

/* ------------------------------------------------------------ PLT stubs
 *
 * A call through the PLT lands in a stub no symbol table names; objdump
 * and perf name it "puts@plt".  Like objdump (bfd's synthetic symbols),
 * each stub is decoded for the GOT slot it jumps through, and the slot
 * named after the dynamic relocation that fills it: JUMP_SLOT and
 * IRELATIVE (.rela.plt) for .plt and .plt.sec, GLOB_DAT (.rela.dyn) for
 * .plt.got.  Decoding, rather than assuming that entry i is relocation i,
 * holds for every layout the linkers make (lazy or -z now, IBT's
 * .plt.sec, -fno-plt's .plt.got, lld's) and names nothing where the code
 * is not a stub (PLT0, IBT's lazy .plt).  Everything read is bounded by
 * its section's data: a hostile file gives fewer names, never a read out
 * of bounds. */

#define PLT_RELOCS_MAX (1u << 22)
#define PLT_NAME_MAX 4096u /* longer symbol names are not given a stub */

struct plt_reloc {
	uint64_t slot; /* the GOT slot's address */
	int64_t addend; /* IRELATIVE: the resolver */
	uint32_t sym; /* in the relocation section's symbol table */
	uint32_t symtab; /* that table's section index */
};

struct plt_ctx {
	Elf *elf;
	struct plt_reloc *r;
	size_t n;
	char *name; /* "NAME@plt", PLT_NAME_MAX + 5 bytes */
};

static int cmp_reloc(const void *a, const void *b)
{
	const struct plt_reloc *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static bool plt_reloc_type(uint16_t machine, uint32_t type)
{
	if (machine == EM_X86_64)
		return type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT ||
		       type == R_X86_64_IRELATIVE;
	return type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT ||
	       type == R_AARCH64_IRELATIVE;
}

/* The relocations that fill GOT slots, from every allocated SHT_RELA
 * section, sorted by slot.  0 or -ENOMEM. */
static int plt_relocs(struct plt_ctx *P, uint16_t machine)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(P->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(sh.sh_flags & SHF_ALLOC) || sh.sh_entsize != sizeof(Elf64_Rela) ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		n = data->d_size / sizeof(Elf64_Rela);
		for (size_t i = 0; i < n && P->n < PLT_RELOCS_MAX; i++) {
			GElf_Rela rela;

			if (!gelf_getrela(data, (int)i, &rela) ||
			    !plt_reloc_type(machine, (uint32_t)GELF_R_TYPE(rela.r_info)))
				continue;
			if (P->n == cap) {
				size_t c = cap ? 2 * cap : 256;
				void *p = realloc(P->r, c * sizeof(*P->r));

				if (!p)
					return -ENOMEM;
				P->r = p;
				cap = c;
			}
			P->r[P->n++] = (struct plt_reloc){
				.slot = rela.r_offset,
				.addend = rela.r_addend,
				.sym = (uint32_t)GELF_R_SYM(rela.r_info),
				.symtab = sh.sh_link,
			};
		}
	}
	if (P->n)
		qsort(P->r, P->n, sizeof(*P->r), cmp_reloc);
	return 0;
}

/* The name of the stub jumping through slot into P->name ("" when no
 * relocation fills that slot or its symbol cannot be read). */
static const char *plt_name(struct plt_ctx *P, uint64_t slot)
{
	size_t lo = 0, hi = P->n;
	const struct plt_reloc *r;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data;
	GElf_Sym sym;
	const char *name;
	size_t len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (P->r[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == P->n || P->r[lo].slot != slot)
		return "";
	r = &P->r[lo];
	if (!r->sym) { /* IRELATIVE: objdump's "*ABS*+0xRESOLVER@plt" */
		snprintf(P->name, PLT_NAME_MAX + 5, "*ABS*+0x%" PRIx64 "@plt", (uint64_t)r->addend);
		return P->name;
	}
	scn = elf_getscn(P->elf, r->symtab);
	if (!scn || !gelf_getshdr(scn, &sh) ||
	    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize ||
	    r->sym >= sh.sh_size / sh.sh_entsize || !(data = elf_getdata(scn, NULL)) ||
	    r->sym >= data->d_size / sh.sh_entsize || !gelf_getsym(data, (int)r->sym, &sym))
		return "";
	name = elf_strptr(P->elf, sh.sh_link, sym.st_name);
	if (!name || !*name || (len = strnlen(name, PLT_NAME_MAX + 1)) > PLT_NAME_MAX)
		return "";
	memcpy(P->name, name, len);
	memcpy(P->name + len, "@plt", 5);
	return P->name;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* x86-64: the GOT slot of the stub at p[0..len) (address addr), from its
 * "jmp *disp(%rip)" (ff 25), after an endbr64 and a bnd prefix (f2) if
 * there are; false if the stub has none where a stub has it. */
static bool x86_64_slot(const unsigned char *p, size_t len, uint64_t addr, uint64_t *slot)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t at = len >= 4 && !memcmp(p, endbr64, sizeof(endbr64)) ? 4 : 0;

	at += at + 1 < len && p[at] == 0xf2;
	if (at + 6 > len || p[at] != 0xff || p[at + 1] != 0x25)
		return false;
	*slot = addr + at + 6 + (uint64_t)(int64_t)(int32_t)le32(p + at + 2);
	return true;
}

/* aarch64: "adrp x16, PAGE; ldr x17, [x16, #OFF]" at p, the slot
 * PAGE + OFF.  (Stubs are found by scanning for this pair: a BTI stub
 * has a "bti c" first, and lld's are then 24 bytes, not 16.) */
static bool aarch64_slot(const unsigned char *p, size_t len, uint64_t addr, uint64_t *slot)
{
	uint32_t adrp, ldr;
	uint64_t imm;

	if (len < 8)
		return false;
	adrp = le32(p);
	ldr = le32(p + 4);
	/* adrp x16; ldr x17, [x16, #imm12 * 8] */
	if ((adrp & 0x9f00001f) != 0x90000010 || (ldr & 0xffc003ff) != 0xf9400211)
		return false;
	imm = (uint64_t)((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3);
	if (imm & (1u << 20)) /* 21-bit signed, in pages */
		imm |= ~(uint64_t)0 << 21;
	*slot = (addr & ~(uint64_t)0xfff) + (imm << 12) + ((ldr >> 10) & 0xfff) * 8;
	return true;
}

static bool plt_starts_endbr64(Elf_Scn *scn)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	Elf_Data *data = elf_getdata(scn, NULL);

	return data && data->d_buf && data->d_size >= 4 && !memcmp(data->d_buf, endbr64, 4);
}

/* Whether the symbols read so far name anything in section shndx. */
static bool has_symbols(const struct sym_build *B, size_t nreal, uint32_t shndx)
{
	for (size_t i = 0; i < nreal; i++)
		if (B->syms[i].shndx == shndx)
			return true;
	return false;
}

/* The stubs of one PLT section.  x86-64: entries of entsize bytes from
 * skip on, each decoded at its start.  aarch64: every 4-byte position
 * from skip on, a stub starting at its adrp (where llvm-objdump puts its
 * label), up to the next one, the last up to the section's end, 24 bytes
 * at most: lld's entries are "adrp; ldr; add; br" (16 bytes), and with
 * BTI or PAC 24 ("bti c" first, or "autia1716" before the br, padded
 * with nops), so a 24-byte stub's last 8 bytes are code of that stub (a
 * pc there is the stub's, not past its end; a "bti c" before the next
 * adrp counts as this stub's, as llvm-objdump's labels have it). */
#define AARCH64_PLT_MAX 24

static int plt_section(struct plt_ctx *P, struct sym_build *B, size_t nreal, Elf_Scn *scn,
		       const GElf_Shdr *sh, uint16_t machine, size_t skip, size_t entsize)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	uint32_t shndx = (uint32_t)elf_ndxscn(scn);
	bool x86 = machine == EM_X86_64;
	size_t step = x86 ? entsize : 4, prev = SIZE_MAX;
	int added = 0;

	if (!data || !data->d_buf || has_symbols(B, nreal, shndx))
		return 0; /* real symbols win */
	for (size_t off = skip; off < data->d_size && data->d_size - off >= step; off += step) {
		const unsigned char *p = (const unsigned char *)data->d_buf + off;
		size_t left = data->d_size - off;
		uint64_t addr = sh->sh_addr + off, slot;
		const char *name;
		bool ok = x86 ? x86_64_slot(p, entsize, addr, &slot)
			      : aarch64_slot(p, left, addr, &slot);

		if (!ok || !*(name = plt_name(P, slot)))
			continue;
		if (GROW(B, syms, nsyms, symcap))
			return -ENOMEM;
		if (prev != SIZE_MAX && B->syms[prev].lo + B->syms[prev].size > addr)
			B->syms[prev].size = addr - B->syms[prev].lo;
		B->syms[B->nsyms] = (struct symbol){
			.lo = addr,
			.size = x86 ? entsize : left < AARCH64_PLT_MAX ? left : AARCH64_PLT_MAX,
			.name = ds__symbols_intern(B, name),
			.shndx = shndx,
			.order = (uint32_t)B->nsyms & ((1u << 30) - 1),
			.bind = SYM_GLOBAL,
		};
		if (!B->syms[B->nsyms].name)
			return -ENOMEM;
		prev = B->nsyms++;
		added++;
	}
	return added;
}

int ds__symtab_add_plt(struct ds_context *ctx, const char *elf_name, struct sym_build *B, Elf *elf)
{
	struct plt_ctx P = { .elf = elf };
	size_t shstrndx, nreal = B->nsyms;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int added = 0, err;

	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	err = plt_relocs(&P, eh.e_machine);
	if (!err && P.n && !(P.name = malloc(PLT_NAME_MAX + 5)))
		err = -ENOMEM;
	while (!err && P.n && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		size_t skip = 0, entsize = 16;
		int n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".plt")) {
			/* PLT0, the lazy resolver's entry: 16 bytes on x86-64
			 * (its jmp uses no relocated slot, but its bytes must
			 * not be decoded as an entry); on aarch64, 32 bytes
			 * whose adrp/ldr load no relocated slot either. */
			skip = eh.e_machine == EM_X86_64 ? 16 : 0;
		} else if (eh.e_machine != EM_X86_64) {
			continue;
		} else if (!strcmp(name, ".plt.got")) {
			/* 8-byte entries, 16 with IBT (endbr64 first). */
			entsize = sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize
				  : plt_starts_endbr64(scn)		      ? 16
									      : 8;
		} else if (strcmp(name, ".plt.sec")) {
			continue;
		}
		n = plt_section(&P, B, nreal, scn, &sh, eh.e_machine, skip, entsize);
		if (n < 0)
			err = n;
		else
			added += n;
	}
	if (added)
		ds_debug(ctx, "%s: %d PLT stubs named", elf_name, added);
	free(P.r);
	free(P.name);
	return err ? err : added;
}
