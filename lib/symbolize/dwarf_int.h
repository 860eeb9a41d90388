/* SPDX-License-Identifier: MIT */
/*
 * The DWARF reader's own header, for its files alone (lib/symbolize/dwarf*.c):
 * the cursor and its readers, the tables of one file (sections, units,
 * abbreviations), a DIE's attributes and read_form(), the switch that is
 * most of an index build's instructions.  The hot readers are static
 * inline here so that each file reading DIEs inlines them as the reader
 * did when it was one file.  Then what each file gives the others, named
 * ds__dw_*.  The files use each other in one direction only, each only
 * those listed before it:
 *   dwarf_sections.c   the sections of a file, decompressed
 *   dwarf_die.c        abbreviations, a DIE's attributes, range lists,
 *                      unit headers and the map of addresses to CUs
 *   dwarf_line.c       a CU's line program
 *   dwarf_walk.c       a CU's DIE walk into scopes, and their names
 *   dwarf_split.c      split DWARF: the .dwp index (dwarf_split.h), the
 *                      skeletons, the auxiliary files, split units' builds
 *   dwarf.c            opening a DWARF, workers, a CU's build
 */
#ifndef DS_DWARF_INT_H
#define DS_DWARF_INT_H

#include "symindex.h"
#include "dwarf_split.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifndef DW_AT_GNU_discriminator
#define DW_AT_GNU_discriminator 0x2136 /* gcc; not in elfutils 0.188 dwarf.h */
#endif
#define DW_FORM_GNU_addr_index_ 0x1f01
#define DW_FORM_GNU_str_index_ 0x1f02
#define DW_FORM_GNU_ref_alt_ 0x1f20
#define DW_FORM_GNU_strp_alt_ 0x1f21

#define NAME_CACHE 4096 /* resolved names per worker (a power of two) */
#define ABBREV_CACHE 8 /* other CUs' abbreviation tables per worker */

/* ------------------------------------------------------------ cursors */

struct cursor {
	const unsigned char *p, *end;
	bool bad, be;
};

static inline uint64_t rd(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* (The common case in one load: a little-endian file read here.) */
	if (!c->be && n <= 8) {
		memcpy(&v, c->p, n);
		c->p += n;
		return v;
	}
#endif
	if (c->be)
		for (size_t i = 0; i < n; i++)
			v = v << 8 | c->p[i];
	else
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static inline uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;

	if (c->p < c->end && !(*c->p & 0x80)) /* most are one byte */
		return *c->p++;

	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		unsigned char b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return v;
}

static inline int64_t sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0x80;

	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80)
		c->bad = true;
	else if (shift < 64 && (b & 0x40))
		/* Sign-extended in unsigned arithmetic: at shift 63 (a
		 * 10-byte encoding, DW_FORM_sdata of INT64_MIN's range in
		 * glibc's DWARF) -(1 << 63) would overflow. */
		v = (int64_t)((uint64_t)v | (UINT64_MAX << shift));
	return v;
}

static inline void skip(struct cursor *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

static inline const char *cstr(struct cursor *c)
{
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	const char *s = (const char *)c->p;

	if (!nul) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/* ------------------------------------------------------------ sections */

enum {
	SEC_INFO,
	SEC_ABBREV,
	SEC_STR,
	SEC_LINE_STR,
	SEC_STR_OFFSETS,
	SEC_ADDR,
	SEC_RANGES,
	SEC_RNGLISTS,
	SEC_LINE,
	SEC_ARANGES,
	SEC_CU_INDEX, /* a .dwp's */
	NSEC
};

struct sec {
	const unsigned char *p;
	size_t size;
	bool nul_end; /* its last byte is 0: every string in it ends inside */
};

/* A unit header and what its top DIE says for the whole unit. */
struct unit {
	uint64_t off, end; /* [off, end) in .debug_info */
	uint64_t die; /* the top DIE */
	uint64_t abbrev_off;
	uint64_t str_offsets_base, addr_base, rnglists_base;
	uint64_t base; /* DW_AT_low_pc: the base of its range lists */
	uint64_t stmt_list; /* UINT64_MAX: none */
	const char *comp_dir;
	uint8_t version, addr_size, off_size, unit_type;
	bool mangled; /* binutils' mangle_style(): a language with mangled names */
	bool has_aranges;
};

/* One DWARF file: the debuginfo, or one of its auxiliary files. */
struct dfile {
	struct sec s[NSEC];
	void *owned[NSEC]; /* decompressed */
	struct unit *units; /* by offset */
	size_t nunits;
	bool be;
};

struct ds__dwarf {
	struct ds_context *ctx;
	char *name;
	struct dfile main;
	const struct dfile *alt; /* the dwz alt file's (the store's, pinned); NULL: none */
	size_t *code_units; /* unit index of each CU with code */
	size_t ncode;
	struct ds__cu_range *ranges;
	size_t nranges, rcap;
	uint64_t bytes;
	/* Where the auxiliary files come from (the store's; zero: nowhere),
	 * and D's holds: the alt file's (pinned as long as D lives), the
	 * package's (pinned by each split unit's build). */
	struct ds__aux_src src;
	struct ds__aux *alt_h, *dwp_h;
	bool alt_missing; /* it names an alt file the store does not have */
	/* Split DWARF (see dwarf_split.c). */
	char *binary; /* for <binary>.dwp and .dwo files beside it (NULL) */
	struct skel *skels; /* skeleton units, by unit */
	size_t nskels;
	atomic_bool warned_missing;
};

#define ALL_SECS ((1u << NSEC) - 1)

/* ------------------------------------------------------ abbreviations */

struct attrspec {
	uint16_t name, form;
	int32_t size; /* the form's bytes in this table's unit, -1: it varies */
	int64_t implicit;
};

/* A DIE of a form whose size varies, after pre bytes of fixed-size
 * ones: how the walk gets over a DIE without looking at each attribute. */
struct skipstep {
	uint32_t pre;
	uint16_t form;
};

#define NO_STEPS UINT32_MAX /* (nsteps) the fixed runs overflowed: attribute by attribute */
#define SIB_NONE (-1) /* (sib) no DW_AT_sibling */
#define SIB_SLOW (-2) /* a DW_AT_sibling not at a fixed place, or not of a refN form */

struct abbrev {
	uint64_t code;
	uint32_t tag, first, n; /* attrs[first, first + n) */
	int32_t fixed; /* bytes of its attributes when all forms have one size, else -1 */
	/* When fixed is -1: steps[step, step + nsteps), then tail bytes. */
	uint32_t step, nsteps, tail;
	/* Where its one DW_AT_sibling's value is (bytes into the attributes)
	 * when every attribute before it has a fixed size and its form is
	 * ref1, ref2, ref4 or ref8 (of sib_size bytes); else SIB_*. */
	int32_t sib;
	uint8_t sib_size;
	bool children;
	/* A subprogram or inlined instance with DW_AT_low_pc and
	 * DW_AT_high_pc, or DW_AT_ranges: it may have code.  Other DIEs give
	 * the walk nothing but their DW_AT_sibling. */
	bool scope;
};

struct abbrevs {
	uint64_t off; /* in .debug_abbrev; UINT64_MAX: empty slot */
	uint8_t addr_size, off_size, version; /* what the sizes in fixed are for */
	struct abbrev *v; /* v[code - 1] when dense, else sorted by code */
	size_t n, cap;
	bool dense;
	struct attrspec *a;
	size_t na, acap;
	struct skipstep *steps;
	size_t nsteps, stepcap;
	unsigned age;
};

static inline const struct abbrev *abbrev_get(const struct abbrevs *t, uint64_t code)
{
	size_t lo = 0, hi = t->n;

	if (t->dense)
		return code - 1 < t->n ? &t->v[code - 1] : NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].code == code)
			return &t->v[mid];
		if (t->v[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ----------------------------------------------------------- attributes */

/* What one DIE says that the index needs; values as read, with
 * references made absolute (in f's .debug_info, or the alt file's). */
struct die {
	uint64_t off;
	uint32_t tag;
	bool children;
	const char *name, *linkage, *mips;
	uint64_t low, high, ranges, sibling, origin, spec;
	uint64_t call_file, call_line, call_column, disc;
	uint64_t lang, stmt_list, str_offsets_base, addr_base, rnglists_base;
	const char *comp_dir;
	uint8_t has_low : 1, high_is_addr : 1, has_high : 1, has_ranges : 1, ranges_index : 1,
		origin_alt : 1, spec_alt : 1, has_sbase : 1;
	uint8_t has_abase : 1, has_rbase : 1, has_stmt : 1, low_index : 1, high_index : 1;
	/* strx forms wait for str_offsets_base (a unit's top DIE may give it
	 * after them): form and index. */
	uint64_t name_x, linkage_x, mips_x, comp_dir_x;
	uint8_t name_xf, linkage_xf, mips_xf, comp_dir_xf;
};

struct ctxu { /* a unit being read */
	const struct dfile *f;
	const struct unit *u;
	bool is_alt;
	const struct dfile *alt; /* for GNU_strp_alt (NULL: none) */
};

static inline const char *str_at(const struct sec *s, uint64_t off)
{
	/* (A string section ends with a NUL, as compilers write it, so no
	 * string needs its own scan for one.) */
	if (!s->p || off >= s->size || (!s->nul_end && !memchr(s->p + off, 0, s->size - off)))
		return NULL;
	return (const char *)s->p + off;
}

static inline uint64_t read_at(const struct sec *s, uint64_t off, unsigned size, bool be, bool *ok)
{
	struct cursor c = { s->p, s->p + s->size, false, be };

	if (!s->p || off > s->size) {
		*ok = false;
		return 0;
	}
	c.p += off;
	uint64_t v = rd(&c, size);
	*ok = !c.bad;
	return v;
}

static inline const char *strx(const struct ctxu *cu, uint64_t idx)
{
	const struct unit *u = cu->u;
	bool ok;
	uint64_t off = read_at(&cu->f->s[SEC_STR_OFFSETS], u->str_offsets_base + idx * u->off_size,
			       u->off_size, cu->f->be, &ok);

	return ok ? str_at(&cu->f->s[SEC_STR], off) : NULL;
}

enum { V_NONE, V_CONST, V_ADDR, V_ADDRX, V_REF, V_REF_ALT, V_STR, V_STRX, V_SECOFF, V_RNGX };

/* Read one attribute value of form at c: its kind and value (or string).
 * (Inline, and so not recursive for DW_FORM_indirect: it is most of a
 * build's instructions, and a call per attribute was a fifth of them.) */
static inline __attribute__((always_inline)) int
read_form(const struct ctxu *cu, struct cursor *c, unsigned form, int64_t implicit, uint64_t *v,
	  const char **s)
{
	const struct unit *u = cu->u;
	unsigned osz = u->off_size;

	*v = 0;
	if (form == DW_FORM_indirect) {
		uint64_t f = uleb(c);

		if (f == DW_FORM_indirect || f > UINT16_MAX) {
			c->bad = true;
			return V_NONE;
		}
		form = (unsigned)f;
		implicit = 0;
	}
	switch (form) {
	case DW_FORM_addr:
		*v = rd(c, u->addr_size);
		return V_ADDR;
	case DW_FORM_data1:
	case DW_FORM_flag:
		*v = rd(c, 1);
		return V_CONST;
	case DW_FORM_data2:
		*v = rd(c, 2);
		return V_CONST;
	case DW_FORM_data4:
		*v = rd(c, 4);
		return V_CONST;
	case DW_FORM_data8:
		*v = rd(c, 8);
		return V_CONST;
	case DW_FORM_data16:
		skip(c, 16);
		return V_NONE;
	case DW_FORM_udata:
		*v = uleb(c);
		return V_CONST;
	case DW_FORM_sdata:
		*v = (uint64_t)sleb(c);
		return V_CONST;
	case DW_FORM_implicit_const:
		*v = (uint64_t)implicit;
		return V_CONST;
	case DW_FORM_flag_present:
		*v = 1;
		return V_CONST;
	case DW_FORM_string:
		*s = cstr(c);
		return V_STR;
	case DW_FORM_strp:
		*s = str_at(&cu->f->s[SEC_STR], rd(c, osz));
		return V_STR;
	case DW_FORM_line_strp:
		*s = str_at(&cu->f->s[SEC_LINE_STR], rd(c, osz));
		return V_STR;
	case DW_FORM_GNU_strp_alt_:
	case DW_FORM_strp_sup:
		*v = rd(c, osz);
		*s = cu->alt ? str_at(&cu->alt->s[SEC_STR], *v) : NULL;
		return V_STR;
	case DW_FORM_strx:
	case DW_FORM_GNU_str_index_:
		*v = uleb(c);
		return V_STRX;
	case DW_FORM_strx1:
		*v = rd(c, 1);
		return V_STRX;
	case DW_FORM_strx2:
		*v = rd(c, 2);
		return V_STRX;
	case DW_FORM_strx3:
		*v = rd(c, 3);
		return V_STRX;
	case DW_FORM_strx4:
		*v = rd(c, 4);
		return V_STRX;
	case DW_FORM_addrx:
	case DW_FORM_GNU_addr_index_:
		*v = uleb(c);
		return V_ADDRX;
	case DW_FORM_addrx1:
		*v = rd(c, 1);
		return V_ADDRX;
	case DW_FORM_addrx2:
		*v = rd(c, 2);
		return V_ADDRX;
	case DW_FORM_addrx3:
		*v = rd(c, 3);
		return V_ADDRX;
	case DW_FORM_addrx4:
		*v = rd(c, 4);
		return V_ADDRX;
	case DW_FORM_ref1:
		*v = u->off + rd(c, 1);
		return V_REF;
	case DW_FORM_ref2:
		*v = u->off + rd(c, 2);
		return V_REF;
	case DW_FORM_ref4:
		*v = u->off + rd(c, 4);
		return V_REF;
	case DW_FORM_ref8:
		*v = u->off + rd(c, 8);
		return V_REF;
	case DW_FORM_ref_udata:
		*v = u->off + uleb(c);
		return V_REF;
	case DW_FORM_ref_addr:
		*v = rd(c, u->version <= 2 ? u->addr_size : osz);
		return V_REF;
	case DW_FORM_GNU_ref_alt_:
	case DW_FORM_ref_sup4:
		*v = rd(c, form == DW_FORM_ref_sup4 ? 4 : osz);
		return V_REF_ALT;
	case DW_FORM_ref_sup8:
		*v = rd(c, 8);
		return V_REF_ALT;
	case DW_FORM_ref_sig8:
		skip(c, 8);
		return V_NONE;
	case DW_FORM_sec_offset:
		*v = rd(c, osz);
		return V_SECOFF;
	case DW_FORM_rnglistx:
		*v = uleb(c);
		return V_RNGX;
	case DW_FORM_loclistx:
		uleb(c);
		return V_NONE;
	case DW_FORM_block1:
		skip(c, rd(c, 1));
		return V_NONE;
	case DW_FORM_block2:
		skip(c, rd(c, 2));
		return V_NONE;
	case DW_FORM_block4:
		skip(c, rd(c, 4));
		return V_NONE;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		skip(c, uleb(c));
		return V_NONE;
	default:
		c->bad = true; /* a form we cannot size: the rest is unreadable */
		return V_NONE;
	}
}

static inline const char *resolve_strx(const struct ctxu *cu, uint8_t xf, uint64_t x, const char *s)
{
	return xf ? strx(cu, x) : s;
}

/* ----------------------------------------------------------- range lists */

typedef int (*range_fn)(void *arg, uint64_t lo, uint64_t hi);

/* --------------------------------------------------------- split units */

/* A skeleton unit of the main file and the split unit it needs (see
 * dwarf_split.c). */
struct skel {
	size_t unit; /* in D->main.units */
	uint64_t id; /* the dwo id */
	uint64_t ranges_base; /* DW_AT_GNU_ranges_base (DWARF 4) */
	const char *dwo_name; /* in the binary's sections */
	/* D's hold on the unit's .dwo, from its first build on (NULL: not
	 * asked yet, or the store has none).  Set by the unit's builder. */
	_Atomic(struct ds__aux *) dwo;
};

/* An auxiliary file's DWARF: what the DWARF of every file naming it reads
 * (an alt file's GNU_ref_alt and GNU_strp_alt, a package's or a .dwo's
 * split units), opened once by the store and shared.  Immutable once
 * open: builders on any thread read it without a lock. */
struct ds__dwarf_aux {
	struct dfile f;
	struct ds__dwp_index ix; /* a package's unit index */
	uint64_t bytes;
	enum ds__aux_kind kind;
};

/* ------------------------------------------------------------- workers */

struct name_slot {
	uint64_t key; /* offset + 1, alt in the top bit; 0: empty */
	const char *name, *linkage, *mips;
};

/* A line program's special opcodes, decoded once for the header's
 * parameters: most CUs of a file share them. */
struct special_ops {
	uint32_t key; /* opcode_base, line_base, line_range, min_inst; 0: none yet */
	uint32_t addr[256]; /* the address advance (times min_inst) */
	int32_t line[256]; /* the line advance */
};

struct ds__dwarf_worker {
	struct ds__dwarf *D;
	struct special_ops ops;
	const struct dfile *split; /* the split unit being built: refs lead there */
	struct abbrevs cur; /* the unit being built */
	struct abbrevs other[ABBREV_CACHE]; /* tables of units refs lead to */
	unsigned clock;
	struct name_slot *names;
};

struct build {
	struct ds__dwarf_worker *W;
	struct sym_build *B;
	const struct ctxu *cu;
	uint32_t *fileoff; /* the CU's file table, pool offsets */
	size_t nfileoff;
};

/* ---- dwarf_sections.c */

/* Load f's sections of want (bits 1 << SEC_*; dwo: of a .dwo or .dwp)
 * that it does not have yet, decompressed; their bytes added to *bytes,
 * fname for messages.  0, -ENODATA or -ENOMEM. */
int ds__dw_load_sections(struct ds_context *ctx, const char *fname, uint64_t *bytes, Elf *elf,
			 struct dfile *f, bool dwo, unsigned want);
void ds__dw_dfile_release(struct dfile *f);
/* Whether the DWARF of elf may be read: no compressed section claims a
 * size out of proportion (else warned, with name). */
bool ds__dw_plausible(struct ds_context *ctx, Elf *elf, const char *name);

/* ---- dwarf_die.c */

/* Parse f's abbreviation table at off, for unit u, into t.  0 or -ENOMEM. */
int ds__dw_abbrevs_read(const struct dfile *f, uint64_t off, const struct unit *u,
			struct abbrevs *t);
void ds__dw_abbrevs_release(struct abbrevs *t);
/* One DIE at c (its abbreviation ab of t), attributes into d.  False when
 * it cannot be read. */
bool ds__dw_read_die(const struct ctxu *cu, const struct abbrevs *t, const struct abbrev *ab,
		     struct cursor *c, struct die *d);
/* The unit of f holding .debug_info offset off, NULL: none. */
const struct unit *ds__dw_unit_of(const struct dfile *f, uint64_t off);
/* The address ranges of d, each passed to fn. */
int ds__dw_die_ranges(const struct ctxu *cu, const struct die *d, range_fn fn, void *arg);
/* The header and top DIE of f's unit at off into u (scratch: the
 * abbreviations); false when there is no unit there. */
bool ds__dw_read_unit(const struct dfile *f, uint64_t off, struct unit *u, struct abbrevs *scratch);
/* f's unit headers and top DIEs.  0 or -ENOMEM. */
int ds__dw_scan_units(struct ds_context *ctx, const char *name, uint64_t *bytes, struct dfile *f,
		      struct abbrevs *scratch);
/* D's units with code, and their address ranges.  0 or -ENOMEM. */
int ds__dw_map_units(struct ds__dwarf *D);

/* ---- dwarf_line.c */

/* The line program at off of bd's CU: its rows into bd->B, its file table
 * into bd->fileoff.  0 or -ENOMEM. */
int ds__dw_read_line_program(struct build *bd, uint64_t off, const char *comp_dir);

/* ---- dwarf_walk.c */

/* The scopes of bd's CU, from its top DIE's children at c (abbreviations
 * t).  0 or -ENOMEM. */
int ds__dw_walk_unit(struct build *bd, const struct abbrevs *t, struct cursor *c);

/* ---- dwarf_split.c */

/* D's skeleton units, into D->skels.  0 or -ENOMEM. */
int ds__dw_scan_skeletons(struct ds__dwarf *D, struct abbrevs *scratch);
/* The package of D's split units, from the store, held for D's life. */
int ds__dw_attach_dwp(struct ds__dwarf *D);
/* The skeleton of unit, NULL: none. */
struct skel *ds__dw_skel_of(const struct ds__dwarf *D, size_t unit);
/* The scopes of skeleton unit sku, from its split unit.  0 or -ENOMEM. */
int ds__dw_split_walk(struct build *bd, struct skel *sk, const struct unit *sku);

#endif
