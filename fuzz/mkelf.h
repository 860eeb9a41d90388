/* SPDX-License-Identifier: MIT */
/*
 * Hand-built minimal ELF files carrying notes, for the build-ID tests and
 * the fuzz corpus.  Because we choose every byte, the expected build ID is
 * known from first principles, in any ELF class and byte order, without a
 * cross compiler.  Header-only so that tests/unit/test_buildid.c, fuzz/mkelf.c
 * and the replay driver share one table of variants.
 *
 * Layout: Ehdr, one Phdr per group that has a PT_NOTE, each group's notes
 * (padded to the group's alignment), .shstrtab, section headers (a null
 * one, one SHT_NOTE per group that has a section, .shstrtab last).
 */
#ifndef DS_MKELF_H
#define DS_MKELF_H

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MKELF_MAX_LEN	 4096
#define MKELF_MAX_NOTES	 6
#define MKELF_MAX_GROUPS 3

struct mkelf_note {
	const char *owner; /* NULL: namesz 0 */
	uint32_t type;
	uint32_t descsz;
	/* desc bytes are generated: byte i is seed + i * 7 (so every note's
	 * desc differs and the right one is recognisable) */
	uint8_t seed;
	/* n_descsz as written, when non-zero (claims more than is there) */
	uint32_t lie_descsz;
};

struct mkelf_group {
	bool phdr;	    /* a PT_NOTE program header covers it */
	bool shdr;	    /* an SHT_NOTE section covers it */
	unsigned int align; /* 4 or 8 */
	int nnotes;
	struct mkelf_note notes[MKELF_MAX_NOTES];
	/* p_filesz/sh_size shorter than the data by this much */
	unsigned int cut_size;
};

enum mkelf_expect {
	MKELF_ID,      /* the build ID in group expect_group, note expect_note */
	MKELF_ERR,     /* exactly expect_err */
	MKELF_ANY_ERR, /* some error (-ENODATA or -ENOEXEC): never an ID */
};

struct mkelf_variant {
	const char *name;
	int elfclass; /* 32 or 64 */
	bool msb;
	uint16_t e_type;
	int ngroups;
	struct mkelf_group groups[MKELF_MAX_GROUPS];
	unsigned char bad_ident_class; /* written over EI_CLASS when != 0 */
	enum mkelf_expect expect;
	int expect_group, expect_note;
	int expect_err;
};

/* Where the builder put things, for tests that cut or patch the file. */
struct mkelf_layout {
	size_t len;
	size_t desc_off[MKELF_MAX_GROUPS][MKELF_MAX_NOTES];
	size_t ph_off, sh_off;
};

/* clang-format off */
#define MKELF_BID(s, n) { .owner = "GNU", .type = NT_GNU_BUILD_ID, .descsz = (n), .seed = (s) }
#define MKELF_ABI { .owner = "GNU", .type = NT_GNU_ABI_TAG, .descsz = 16, .seed = 0 }
/* Like .note.gnu.property with a 4-byte desc: where 4- and 8-byte note
 * alignment disagree on where the next note starts. */
#define MKELF_PROP4 { .owner = "GNU", .type = NT_GNU_PROPERTY_TYPE_0, .descsz = 4, .seed = 9 }

static const struct mkelf_variant mkelf_variants[] = {
	{ .name = "le64", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x11, 20) } } } },
	{ .name = "be64", .elfclass = 64, .msb = true, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x22, 20) } } } },
	{ .name = "le32", .elfclass = 32, .e_type = ET_EXEC, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x33, 20) } } } },
	{ .name = "be32", .elfclass = 32, .msb = true, .e_type = ET_EXEC, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x44, 16) } } } },
	/* The build ID comes last, after a type-3 note of another owner and a
	 * GNU note of another type: owner and type must both be checked. */
	{ .name = "le64-after-decoys", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 4,
			.notes = { MKELF_ABI,
				   { .owner = "XYZ", .type = NT_GNU_BUILD_ID, .descsz = 20, .seed = 0x99 },
				   { .owner = "GNU", .type = 4, .descsz = 6, .seed = 0x77 },
				   MKELF_BID(0x55, 20) } } },
	  .expect_note = 3 },
	{ .name = "be32-after-decoys", .elfclass = 32, .msb = true, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 3,
			.notes = { { .owner = "GNUX", .type = NT_GNU_BUILD_ID, .descsz = 8, .seed = 0x98 },
				   { .owner = NULL, .type = NT_GNU_BUILD_ID, .descsz = 12, .seed = 0x97 },
				   MKELF_BID(0x66, 20) } } },
	  .expect_note = 2 },
	/* Section headers only (like an ET_REL or a file whose phdrs are
	 * gone), the build ID in the second note section. */
	{ .name = "le64-sections-only", .elfclass = 64, .e_type = ET_REL, .ngroups = 2,
	  .groups = { { .shdr = true, .align = 4, .nnotes = 1, .notes = { MKELF_ABI } },
		      { .shdr = true, .align = 4, .nnotes = 1, .notes = { MKELF_BID(0x77, 20) } } },
	  .expect_group = 1 },
	{ .name = "be64-sections-only", .elfclass = 64, .msb = true, .e_type = ET_REL, .ngroups = 2,
	  .groups = { { .shdr = true, .align = 4, .nnotes = 1, .notes = { MKELF_ABI } },
		      { .shdr = true, .align = 4, .nnotes = 1, .notes = { MKELF_BID(0x78, 20) } } },
	  .expect_group = 1 },
	{ .name = "le32-phdrs-only", .elfclass = 32, .e_type = ET_EXEC, .ngroups = 1,
	  .groups = { { .phdr = true, .align = 4, .nnotes = 2,
			.notes = { MKELF_ABI, MKELF_BID(0x88, 20) } } },
	  .expect_note = 1 },
	/* The PT_NOTE has no build ID; a section that no segment covers has. */
	{ .name = "le64-segment-without-id", .elfclass = 64, .e_type = ET_DYN, .ngroups = 2,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1, .notes = { MKELF_ABI } },
		      { .shdr = true, .align = 4, .nnotes = 1, .notes = { MKELF_BID(0x89, 20) } } },
	  .expect_group = 1 },
	/* Two PT_NOTEs as x86-64 linkers make them: the 8-aligned property
	 * note first, the build ID in the second. */
	{ .name = "le64-two-segments", .elfclass = 64, .e_type = ET_DYN, .ngroups = 2,
	  .groups = { { .phdr = true, .shdr = true, .align = 8, .nnotes = 1,
			.notes = { { .owner = "GNU", .type = NT_GNU_PROPERTY_TYPE_0, .descsz = 16 } } },
		      { .phdr = true, .shdr = true, .align = 4, .nnotes = 2,
			.notes = { MKELF_BID(0x8a, 20), MKELF_ABI } } },
	  .expect_group = 1 },
	/* In an 8-aligned note segment the note after a 4-byte desc starts
	 * at +24, not +20 (gABI; elfutils' ELF_T_NHDR8). */
	{ .name = "le64-align8", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 8, .nnotes = 2,
			.notes = { MKELF_PROP4, MKELF_BID(0x8b, 20) } } },
	  .expect_note = 1 },
	/* The same in a PT_NOTE alone: no section for libelf to fall back on
	 * (it picks the note alignment from sh_addralign by itself). */
	{ .name = "le64-align8-phdrs-only", .elfclass = 64, .e_type = ET_EXEC, .ngroups = 1,
	  .groups = { { .phdr = true, .align = 8, .nnotes = 2,
			.notes = { MKELF_PROP4, MKELF_BID(0x8c, 20) } } },
	  .expect_note = 1 },
	{ .name = "be32-align8-phdrs-only", .elfclass = 32, .msb = true, .e_type = ET_EXEC,
	  .ngroups = 1,
	  .groups = { { .phdr = true, .align = 8, .nnotes = 2,
			.notes = { MKELF_PROP4, MKELF_BID(0x8d, 20) } } },
	  .expect_note = 1 },
	/* ld --build-id=0x... with a length not a multiple of 4: the desc is
	 * padded, the next note must still be found where padding says. */
	{ .name = "le64-desc10", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .align = 4, .nnotes = 2,
			.notes = { MKELF_BID(0x90, 10), MKELF_ABI } } } },
	{ .name = "be32-desc1", .elfclass = 32, .msb = true, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x91, 1) } } } },
	{ .name = "le64-desc64", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x92, 64) } } } },
	/* 65 bytes do not fit DS_BUILD_ID_MAX: an error, never 64 of them. */
	{ .name = "le64-desc65", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x93, 65) } } },
	  .expect = MKELF_ANY_ERR },
	{ .name = "le64-desc0", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x94, 0) } } },
	  .expect = MKELF_ANY_ERR },
	{ .name = "le64-no-id", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_ABI } } },
	  .expect = MKELF_ERR, .expect_err = -ENODATA },
	{ .name = "be32-no-notes", .elfclass = 32, .msb = true, .e_type = ET_REL, .ngroups = 0,
	  .expect = MKELF_ERR, .expect_err = -ENODATA },
	/* n_descsz claims more than the segment holds. */
	{ .name = "le64-desc-overruns", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .align = 4, .nnotes = 1,
			.notes = { { .owner = "GNU", .type = NT_GNU_BUILD_ID, .descsz = 20,
				     .seed = 0x95, .lie_descsz = 0x7ffffff0 } } } },
	  .expect = MKELF_ANY_ERR },
	/* The segment is shorter than the note in it. */
	{ .name = "be64-segment-cut", .elfclass = 64, .msb = true, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .align = 4, .nnotes = 1, .cut_size = 12,
			.notes = { MKELF_BID(0x96, 20) } } },
	  .expect = MKELF_ANY_ERR },
	{ .name = "bad-class", .elfclass = 64, .e_type = ET_DYN, .ngroups = 1,
	  .groups = { { .phdr = true, .shdr = true, .align = 4, .nnotes = 1,
			.notes = { MKELF_BID(0x97, 20) } } },
	  .bad_ident_class = 7, .expect = MKELF_ERR, .expect_err = -ENOEXEC },
};
/* clang-format on */

#define MKELF_NVARIANTS (sizeof(mkelf_variants) / sizeof(mkelf_variants[0]))

static inline void mkelf_put(uint8_t *p, size_t size, uint64_t v, bool msb)
{
	for (size_t i = 0; i < size; i++) {
		unsigned int shift = 8 * (msb ? size - 1 - i : i);

		p[i] = (uint8_t)(v >> shift);
	}
}

/* Store v in field F of struct T (an Elf32_ or Elf64_ type) at base. */
#define MKELF_SET(buf, base, T, F, v, msb)                                                         \
	mkelf_put((buf) + (base) + offsetof(T, F), sizeof(((T *)0)->F), (uint64_t)(v), (msb))

static inline size_t mkelf_align(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline void mkelf_desc(const struct mkelf_note *n, uint8_t *out)
{
	for (uint32_t i = 0; i < n->descsz; i++)
		out[i] = (uint8_t)(n->seed + i * 7);
}

/* The build ID a variant expects, as lowercase hex ("" if an error). */
static inline void mkelf_expected_hex(const struct mkelf_variant *v, char *hex, size_t len)
{
	uint8_t desc[256];
	const struct mkelf_note *n;

	hex[0] = 0;
	if (v->expect != MKELF_ID)
		return;
	n = &v->groups[v->expect_group].notes[v->expect_note];
	mkelf_desc(n, desc);
	for (uint32_t i = 0; i < n->descsz && 2 * i + 2 < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", desc[i]);
}

static inline size_t mkelf_write_notes(const struct mkelf_group *g, uint8_t *buf, size_t off,
				       bool msb, size_t *desc_off)
{
	for (int i = 0; i < g->nnotes; i++) {
		const struct mkelf_note *n = &g->notes[i];
		uint32_t namesz = n->owner ? (uint32_t)strlen(n->owner) + 1 : 0;

		mkelf_put(buf + off, 4, namesz, msb);
		mkelf_put(buf + off + 4, 4, n->lie_descsz ? n->lie_descsz : n->descsz, msb);
		mkelf_put(buf + off + 8, 4, n->type, msb);
		off += 12;
		if (namesz)
			memcpy(buf + off, n->owner, namesz);
		off = mkelf_align(off + namesz, g->align);
		desc_off[i] = off;
		mkelf_desc(n, buf + off);
		off = mkelf_align(off + n->descsz, g->align);
	}
	return off;
}

static inline void mkelf_ehdr(const struct mkelf_variant *v, uint8_t *buf, size_t phoff, int phnum,
			      size_t shoff, int shnum)
{
	bool m = v->msb;

	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = v->bad_ident_class  ? v->bad_ident_class
			: v->elfclass == 64 ? ELFCLASS64
					    : ELFCLASS32;
	buf[EI_DATA] = m ? ELFDATA2MSB : ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	if (v->elfclass == 64) {
		MKELF_SET(buf, 0, Elf64_Ehdr, e_type, v->e_type, m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_machine, m ? EM_PPC64 : EM_X86_64, m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_version, EV_CURRENT, m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_phoff, phnum ? phoff : 0, m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_shoff, shnum ? shoff : 0, m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_ehsize, sizeof(Elf64_Ehdr), m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_phentsize, sizeof(Elf64_Phdr), m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_phnum, phnum, m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_shentsize, sizeof(Elf64_Shdr), m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_shnum, shnum, m);
		MKELF_SET(buf, 0, Elf64_Ehdr, e_shstrndx, shnum ? shnum - 1 : 0, m);
	} else {
		MKELF_SET(buf, 0, Elf32_Ehdr, e_type, v->e_type, m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_machine, m ? EM_PPC : EM_386, m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_version, EV_CURRENT, m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_phoff, phnum ? phoff : 0, m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_shoff, shnum ? shoff : 0, m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_ehsize, sizeof(Elf32_Ehdr), m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_phentsize, sizeof(Elf32_Phdr), m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_phnum, phnum, m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_shentsize, sizeof(Elf32_Shdr), m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_shnum, shnum, m);
		MKELF_SET(buf, 0, Elf32_Ehdr, e_shstrndx, shnum ? shnum - 1 : 0, m);
	}
}

static inline void mkelf_phdr(const struct mkelf_variant *v, uint8_t *buf, size_t at, size_t off,
			      size_t size, size_t align)
{
	bool m = v->msb;

	if (v->elfclass == 64) {
		MKELF_SET(buf, at, Elf64_Phdr, p_type, PT_NOTE, m);
		MKELF_SET(buf, at, Elf64_Phdr, p_flags, PF_R, m);
		MKELF_SET(buf, at, Elf64_Phdr, p_offset, off, m);
		MKELF_SET(buf, at, Elf64_Phdr, p_vaddr, off, m);
		MKELF_SET(buf, at, Elf64_Phdr, p_paddr, off, m);
		MKELF_SET(buf, at, Elf64_Phdr, p_filesz, size, m);
		MKELF_SET(buf, at, Elf64_Phdr, p_memsz, size, m);
		MKELF_SET(buf, at, Elf64_Phdr, p_align, align, m);
	} else {
		MKELF_SET(buf, at, Elf32_Phdr, p_type, PT_NOTE, m);
		MKELF_SET(buf, at, Elf32_Phdr, p_flags, PF_R, m);
		MKELF_SET(buf, at, Elf32_Phdr, p_offset, off, m);
		MKELF_SET(buf, at, Elf32_Phdr, p_vaddr, off, m);
		MKELF_SET(buf, at, Elf32_Phdr, p_paddr, off, m);
		MKELF_SET(buf, at, Elf32_Phdr, p_filesz, size, m);
		MKELF_SET(buf, at, Elf32_Phdr, p_memsz, size, m);
		MKELF_SET(buf, at, Elf32_Phdr, p_align, align, m);
	}
}

static inline void mkelf_shdr(const struct mkelf_variant *v, uint8_t *buf, size_t at, uint32_t name,
			      uint32_t type, size_t off, size_t size, size_t align)
{
	bool m = v->msb;

	if (v->elfclass == 64) {
		MKELF_SET(buf, at, Elf64_Shdr, sh_name, name, m);
		MKELF_SET(buf, at, Elf64_Shdr, sh_type, type, m);
		MKELF_SET(buf, at, Elf64_Shdr, sh_flags, type == SHT_NOTE ? SHF_ALLOC : 0, m);
		MKELF_SET(buf, at, Elf64_Shdr, sh_offset, off, m);
		MKELF_SET(buf, at, Elf64_Shdr, sh_size, size, m);
		MKELF_SET(buf, at, Elf64_Shdr, sh_addralign, align, m);
	} else {
		MKELF_SET(buf, at, Elf32_Shdr, sh_name, name, m);
		MKELF_SET(buf, at, Elf32_Shdr, sh_type, type, m);
		MKELF_SET(buf, at, Elf32_Shdr, sh_flags, type == SHT_NOTE ? SHF_ALLOC : 0, m);
		MKELF_SET(buf, at, Elf32_Shdr, sh_offset, off, m);
		MKELF_SET(buf, at, Elf32_Shdr, sh_size, size, m);
		MKELF_SET(buf, at, Elf32_Shdr, sh_addralign, align, m);
	}
}

/* Section names: "\0.note.a\0.note.b\0.note.c\0.shstrtab\0" */
static const char mkelf_shstrtab[] = "\0.note.a\0.note.b\0.note.c\0.shstrtab";
#define MKELF_SHSTR_NOTE(i) (1 + 8 * (i))
#define MKELF_SHSTR_SELF    25

/* Build variant v into buf (MKELF_MAX_LEN bytes); returns the length. */
static inline size_t mkelf_build(const struct mkelf_variant *v, uint8_t *buf,
				 struct mkelf_layout *lay)
{
	size_t ehsize = v->elfclass == 64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phent = v->elfclass == 64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t shent = v->elfclass == 64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size_t goff[MKELF_MAX_GROUPS], gend[MKELF_MAX_GROUPS], off, stroff;
	int phnum = 0, shnum = 0, ph = 0, sh = 1;

	memset(buf, 0, MKELF_MAX_LEN);
	memset(lay, 0, sizeof(*lay));
	for (int g = 0; g < v->ngroups; g++) {
		phnum += v->groups[g].phdr;
		shnum += v->groups[g].shdr;
	}
	/* A file with no note section still has the null and .shstrtab ones. */
	shnum += 2;
	lay->ph_off = ehsize;
	off = ehsize + phnum * phent;
	for (int g = 0; g < v->ngroups; g++) {
		goff[g] = off = mkelf_align(off, 8);
		off = mkelf_write_notes(&v->groups[g], buf, off, v->msb, lay->desc_off[g]);
		gend[g] = off - v->groups[g].cut_size;
	}
	stroff = off;
	memcpy(buf + stroff, mkelf_shstrtab, sizeof(mkelf_shstrtab));
	lay->sh_off = mkelf_align(stroff + sizeof(mkelf_shstrtab), 8);
	for (int g = 0; g < v->ngroups; g++) {
		const struct mkelf_group *gr = &v->groups[g];

		if (gr->phdr)
			mkelf_phdr(v, buf, ehsize + phent * ph++, goff[g], gend[g] - goff[g],
				   gr->align);
		if (gr->shdr)
			mkelf_shdr(v, buf, lay->sh_off + shent * sh++, MKELF_SHSTR_NOTE(g),
				   SHT_NOTE, goff[g], gend[g] - goff[g], gr->align);
	}
	mkelf_shdr(v, buf, lay->sh_off + shent * sh, MKELF_SHSTR_SELF, SHT_STRTAB, stroff,
		   sizeof(mkelf_shstrtab), 1);
	mkelf_ehdr(v, buf, lay->ph_off, phnum, lay->sh_off, shnum);
	lay->len = lay->sh_off + shent * shnum;
	return lay->len;
}

#endif
