/* SPDX-License-Identifier: MIT */
/*
 * Split DWARF (-gsplit-dwarf), all of the DWARF reader's part of it (see
 * dwarf_int.h): the unit index of a .dwp package (dwarf_split.h, which the
 * fuzz harness reads too), the skeleton units of the main file, the
 * auxiliary files' DWARF (an alt file's, a package's, a .dwo's), and the
 * builds of split units from a package or a .dwo.  Where a .dwo or .dwp is
 * looked for is lib/store/locate.c's.
 *
 * The index (.debug_cu_index, .debug_tu_index), after DWARF 5 §7.3.5 and
 * the GNU version 2 it grew from:
 *
 *   header   v5: version (2 bytes, 5), padding (2); v2: version (4, 2);
 *            then section count (columns), unit count, slot count (4 each)
 *   hash     slot count x 8: signatures (dwo ids), 0 in empty slots
 *   rows     slot count x 4: each slot's row, 1-based, 0: empty
 *   offsets  a row of column count x 4 section identifiers (DW_SECT_*),
 *            then unit count rows of column count x 4 offsets
 *   sizes    unit count rows of column count x 4 sizes
 *
 * A signature's slot is found by open addressing: its low bits, then steps
 * of its high bits (odd).  Every number in the index is checked before it
 * is used: the tables lie inside the section, each slot's row is a row,
 * each column a known section that no other column names; a unit's
 * contributions are checked against the sections when it is asked for.
 */
#define _GNU_SOURCE
#include "dwarf_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t get(const unsigned char *p, unsigned n, bool be)
{
	uint64_t v = 0;

	if (be)
		for (unsigned i = 0; i < n; i++)
			v = v << 8 | p[i];
	else
		for (unsigned i = 0; i < n; i++)
			v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A column's DW_SECT_* value as a section of ours, DS_DWP_NONE: unknown. */
static int sect_of(unsigned version, uint32_t id)
{
	if (version == 5) {
		if (id == 2 || id > 8)
			return DS_DWP_NONE; /* (2 is reserved: v2's .debug_types) */
		return (int)id;
	}
	if (id >= 1 && id <= 6)
		return (int)id;
	if (id == 7)
		return DS_DWP_MACINFO;
	if (id == 8)
		return DS_DWP_MACRO;
	return DS_DWP_NONE;
}

int ds__dwp_index_read(const unsigned char *p, size_t size, bool be, struct ds__dwp_index *ix,
		       char *why, size_t whylen)
{
	uint64_t need;
	uint32_t ncols, nunits, nslots;

	memset(ix, 0, sizeof(*ix));
	for (int i = 0; i <= DS_DWP_SECT_MAX; i++)
		ix->col[i] = -1;
	ix->be = be;
	if (!p || size < 16) {
		snprintf(why, whylen, "%zu bytes: no room for its header", size);
		return -EBADMSG;
	}
	if (get(p, 4, be) == 2)
		ix->version = 2;
	else if (get(p, 2, be) == 5)
		ix->version = 5;
	else {
		snprintf(why, whylen, "version %u: not 2 or 5", (unsigned)get(p, 2, be));
		return -EBADMSG;
	}
	ncols = (uint32_t)get(p + 4, 4, be);
	nunits = (uint32_t)get(p + 8, 4, be);
	nslots = (uint32_t)get(p + 12, 4, be);
	if (nslots & (nslots - 1)) {
		snprintf(why, whylen, "%u slots: not a power of two", nslots);
		return -EBADMSG;
	}
	if (nunits > nslots) {
		snprintf(why, whylen, "%u units in %u slots", nunits, nslots);
		return -EBADMSG;
	}
	if (ncols > DS_DWP_SECT_MAX) {
		snprintf(why, whylen, "%u columns: more than there are sections", ncols);
		return -EBADMSG;
	}
	/* (No overflow: nslots <= 2^31, ncols <= 9.) */
	need = 16 + (uint64_t)nslots * 12 + (uint64_t)ncols * 4 + (uint64_t)nunits * ncols * 8;
	if (need > size) {
		snprintf(why, whylen, "its tables need %llu bytes, the section has %zu",
			 (unsigned long long)need, size);
		return -EBADMSG;
	}
	ix->ncols = ncols;
	ix->nunits = nunits;
	ix->nslots = nslots;
	ix->hash = p + 16;
	ix->slot_rows = ix->hash + (size_t)nslots * 8;
	ix->offsets = ix->slot_rows + (size_t)nslots * 4 + (size_t)ncols * 4;
	ix->sizes = ix->offsets + (size_t)nunits * ncols * 4;
	for (uint32_t c = 0; c < ncols; c++) {
		uint32_t id = (uint32_t)get(ix->slot_rows + (size_t)nslots * 4 + c * 4, 4, be);
		int s = sect_of(ix->version, id);

		if (s == DS_DWP_NONE || ix->col[s] >= 0) {
			snprintf(why, whylen, "column %u: %s section %u", c,
				 s == DS_DWP_NONE ? "unknown" : "a second time the", id);
			return -EBADMSG;
		}
		ix->col[s] = (int)c;
	}
	/* (Version 2's type units are in .debug_types.dwo.) */
	if (nunits && ((ix->col[DS_DWP_INFO] < 0 && ix->col[DS_DWP_TYPES] < 0) ||
		       ix->col[DS_DWP_ABBREV] < 0)) {
		snprintf(why, whylen, "no %s column", ix->col[DS_DWP_ABBREV] < 0 ? "abbrev" : "info");
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < nslots; i++) {
		uint64_t row = get(ix->slot_rows + (size_t)i * 4, 4, be);

		if (row > nunits) {
			snprintf(why, whylen, "slot %u: row %llu of %u", i, (unsigned long long)row,
				 nunits);
			return -EBADMSG;
		}
	}
	return 0;
}

uint32_t ds__dwp_index_slot(const struct ds__dwp_index *ix, uint32_t i, uint64_t *sig)
{
	*sig = 0;
	if (i >= ix->nslots)
		return 0;
	*sig = get(ix->hash + (size_t)i * 8, 8, ix->be);
	return (uint32_t)get(ix->slot_rows + (size_t)i * 4, 4, ix->be);
}

uint32_t ds__dwp_index_find(const struct ds__dwp_index *ix, uint64_t sig)
{
	uint32_t mask = ix->nslots - 1, h, step;

	if (!ix->nslots || !ix->nunits)
		return 0;
	h = (uint32_t)sig & mask;
	step = ((uint32_t)(sig >> 32) & mask) | 1;
	for (uint32_t k = 0; k < ix->nslots; k++) {
		uint64_t s;
		uint32_t row = ds__dwp_index_slot(ix, h, &s);

		if (!row)
			return 0;
		if (s == sig)
			return row;
		h = (h + step) & mask;
	}
	return 0;
}

bool ds__dwp_index_row(const struct ds__dwp_index *ix, uint32_t row,
		       const uint64_t secsize[DS_DWP_SECT_MAX + 1],
		       struct ds__dwp_slice out[DS_DWP_SECT_MAX + 1])
{
	memset(out, 0, (DS_DWP_SECT_MAX + 1) * sizeof(*out));
	if (!row || row > ix->nunits)
		return false;
	for (int s = 1; s <= DS_DWP_SECT_MAX; s++) {
		size_t at;
		uint64_t off, size;

		if (ix->col[s] < 0)
			continue;
		at = ((size_t)(row - 1) * ix->ncols + (size_t)ix->col[s]) * 4;
		off = get(ix->offsets + at, 4, ix->be);
		size = get(ix->sizes + at, 4, ix->be);
		if (secsize[s] != UINT64_MAX && (off > secsize[s] || size > secsize[s] - off))
			return false;
		out[s] = (struct ds__dwp_slice){ off, size };
	}
	return true;
}

/* ------------------------------------------------ split units: opening */

/*
 * Split DWARF (-gsplit-dwarf).  A skeleton unit in the binary (DWARF 5
 * DW_UT_skeleton, or a DWARF 4 unit with the GNU DW_AT_GNU_dwo_name) keeps
 * the line table, the CU's ranges and .debug_addr; its DIEs are in a
 * split unit of a .dwo file, or of a .dwp package of those files, which
 * the dwo id of both units ties together.  Here: the skeletons, found
 * with the other units, and the package, asked of the store with the
 * DWARF.  A split unit is read when its CU is built (ds__dw_split_walk()
 * below, for ds__dwarf_build_unit()).
 */
struct split_attrs {
	const char *dwo_name;
	uint64_t dwo_id, ranges_base;
	bool has_id;
};

/* The split-DWARF attributes of a top DIE (at c, abbreviation ab). */
static bool read_split_attrs(const struct ctxu *cu, const struct abbrevs *t,
			     const struct abbrev *ab, struct cursor *c, struct split_attrs *sa)
{
	const struct attrspec *as = t->a + ab->first;

	memset(sa, 0, sizeof(*sa));
	for (uint32_t i = 0; i < ab->n; i++) {
		uint64_t v;
		const char *s = NULL;
		int kind = read_form(cu, c, as[i].form, as[i].implicit, &v, &s);

		if (c->bad)
			return false;
		switch (as[i].name) {
		case DW_AT_dwo_name:
		case DW_AT_GNU_dwo_name:
			sa->dwo_name = kind == V_STRX ? strx(cu, v) : kind == V_STR ? s : NULL;
			break;
		case DW_AT_GNU_dwo_id:
			sa->has_id = kind == V_CONST;
			sa->dwo_id = v;
			break;
		case DW_AT_GNU_ranges_base:
			sa->ranges_base = v;
			break;
		default:
			break;
		}
	}
	return true;
}

/* A DWARF 5 split or skeleton unit's dwo id: the header's last 8 bytes. */
static bool header_id(const struct dfile *f, const struct unit *u, uint64_t *id)
{
	bool ok = false;

	if (u->die >= 8)
		*id = read_at(&f->s[SEC_INFO], u->die - 8, 8, f->be, &ok);
	return ok;
}

/* The skeleton units of the main file, with their dwo names and ids.  A
 * DWARF 4 one needs .debug_addr (its split unit's addresses are there):
 * without it no top DIE is read again. */
int ds__dw_scan_skeletons(struct ds__dwarf *D, struct abbrevs *scratch)
{
	struct dfile *f = &D->main;
	size_t cap = 0;

	for (size_t i = 0; i < f->nunits; i++) {
		const struct unit *u = &f->units[i];
		struct ctxu cu = { f, u, false, NULL };
		struct cursor c = { f->s[SEC_INFO].p + u->die, f->s[SEC_INFO].p + u->end, false,
				    f->be };
		const struct abbrev *ab;
		struct split_attrs sa;
		struct skel *sk;
		uint64_t code;

		if (u->version >= 5 ? u->unit_type != DW_UT_skeleton : !f->s[SEC_ADDR].p)
			continue;
		if (scratch->off != u->abbrev_off &&
		    ds__dw_abbrevs_read(f, u->abbrev_off, u, scratch)) {
			scratch->off = UINT64_MAX;
			return -ENOMEM;
		}
		code = uleb(&c);
		ab = code ? abbrev_get(scratch, code) : NULL;
		if (!ab || !read_split_attrs(&cu, scratch, ab, &c, &sa) || !sa.dwo_name)
			continue;
		if (u->version >= 5)
			sa.has_id = header_id(f, u, &sa.dwo_id);
		if (!sa.has_id)
			continue;
		if (D->nskels == cap) {
			struct skel *v = realloc(D->skels, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			D->skels = v;
		}
		sk = &D->skels[D->nskels++];
		sk->unit = i;
		sk->id = sa.dwo_id;
		sk->ranges_base = sa.ranges_base;
		sk->dwo_name = sa.dwo_name;
		atomic_init(&sk->dwo, NULL);
	}
	D->bytes += cap * sizeof(struct skel);
	return 0;
}

/* The split compile unit of dwo id id in f: its header and top DIE into
 * *u, its whole abbreviation table into *t.  false: none (or its table
 * could not be read: no memory); *other: the id of a split unit there
 * instead, *any set. */
static bool find_split_unit(const struct dfile *f, uint64_t id, struct abbrevs *t, struct unit *u,
			    uint64_t *other, bool *any)
{
	const struct sec *info = &f->s[SEC_INFO];
	uint64_t off = 0;

	while (info->p && off < info->size) {
		struct ctxu cu = { f, u, false, NULL };
		uint64_t uid = 0;
		bool has_id = false;

		if (!ds__dw_read_unit(f, off, u, t))
			return false;
		off = u->end;
		/* (ds__dw_read_unit() parses the table only up to the top DIE's code;
		 * the split unit is built from it whole.) */
		if (t->off != u->abbrev_off && ds__dw_abbrevs_read(f, u->abbrev_off, u, t))
			t->off = UINT64_MAX; /* no memory */
		if (u->version >= 5) {
			if (u->unit_type != DW_UT_split_compile)
				continue;
			has_id = header_id(f, u, &uid);
		} else if (t->off == u->abbrev_off) {
			struct cursor c = { info->p + u->die, info->p + u->end, false, f->be };
			uint64_t code = uleb(&c);
			const struct abbrev *ab = code ? abbrev_get(t, code) : NULL;
			struct split_attrs sa;

			if (ab && read_split_attrs(&cu, t, ab, &c, &sa)) {
				has_id = sa.has_id;
				uid = sa.dwo_id;
			}
		}
		if (!has_id)
			continue;
		if (uid != id) {
			if (!*any)
				*other = uid;
			*any = true;
			continue;
		}
		return t->off == u->abbrev_off;
	}
	return false;
}

int ds__dwarf_aux_open(struct ds_context *ctx, enum ds__aux_kind kind, const struct ds_found *found,
		       uint64_t dwo_id, const char *for_name, struct ds__dwarf_aux **out)
{
	struct abbrevs t = { .off = UINT64_MAX };
	struct ds__dwarf_aux *A;
	char why[160];
	int err;

	*out = NULL;
	if (!found || !found->elf || elf_kind(found->elf) != ELF_K_ELF ||
	    !ds__dw_plausible(ctx, found->elf, found->path))
		return -ENODATA;
	A = calloc(1, sizeof(*A));
	if (!A)
		return -ENOMEM;
	A->kind = kind;
	err = ds__dw_load_sections(ctx, found->path, &A->bytes, found->elf, &A->f,
				   kind != DS__AUX_ALT, ALL_SECS);
	if (!err && !A->f.s[SEC_INFO].p)
		err = -ENODATA;
	if (!err && kind == DS__AUX_ALT) {
		err = ds__dw_scan_units(ctx, found->path, &A->bytes, &A->f, &t);
	} else if (!err && kind == DS__AUX_DWP &&
		   ds__dwp_index_read(A->f.s[SEC_CU_INDEX].p, A->f.s[SEC_CU_INDEX].size, A->f.be,
				      &A->ix, why, sizeof(why))) {
		ds_warn(ctx, "%s: .debug_cu_index: %s; the package is not read", found->path,
			A->f.s[SEC_CU_INDEX].p ? why : "none");
		err = -ENODATA;
	} else if (!err && kind == DS__AUX_DWO) {
		struct unit u;
		uint64_t other = 0;
		bool any = false;

		if (!find_split_unit(&A->f, dwo_id, &t, &u, &other, &any)) {
			if (any)
				ds_warn(ctx,
					"%s: %s is not the split unit of its skeleton (dwo id "
					"%016llx, not %016llx): not used",
					for_name ? for_name : "?", found->path,
					(unsigned long long)other, (unsigned long long)dwo_id);
			else
				ds_warn(ctx, "%s: %s holds no split unit: not used",
					for_name ? for_name : "?", found->path);
			err = any ? -ESTALE : -ENODATA;
		}
	}
	ds__dw_abbrevs_release(&t);
	if (err) {
		ds__dwarf_aux_close(A);
		return err;
	}
	*out = A;
	return 0;
}

void ds__dwarf_aux_close(struct ds__dwarf_aux *A)
{
	if (!A)
		return;
	ds__dw_dfile_release(&A->f);
	free(A);
}

uint64_t ds__dwarf_aux_bytes(const struct ds__dwarf_aux *A)
{
	return A ? A->bytes + sizeof(*A) : 0;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

int ds__dwarf_dwp_ids(const struct ds__dwarf_aux *A, uint64_t **ids, size_t *n)
{
	size_t k = 0;

	*n = 0;
	*ids = malloc((A->ix.nunits ? A->ix.nunits : 1) * sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < A->ix.nslots && k < A->ix.nunits; i++) {
		uint64_t sig;

		if (ds__dwp_index_slot(&A->ix, i, &sig))
			(*ids)[k++] = sig;
	}
	qsort(*ids, k, sizeof(**ids), u64_cmp);
	*n = k;
	return 0;
}

/* The package of the binary or of its debuginfo, held for D's life: the
 * store's, which checks it holds some of the skeletons' ids. */
int ds__dw_attach_dwp(struct ds__dwarf *D)
{
	uint64_t *ids;
	struct ds__dwp_want w;

	if (!D->src.dwp)
		return 0;
	ids = malloc(D->nskels * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < D->nskels; i++)
		ids[i] = D->skels[i].id;
	w = (struct ds__dwp_want){ D->binary, D->name, ids, D->nskels, D->name };
	D->dwp_h = D->src.dwp(D->src.arg, &w);
	free(ids);
	return 0;
}

/* Whether .debug_abbrev names a dwo attribute: a file without one has no
 * skeleton unit.  Every table, every abbreviation, bounded by the
 * section. */
static bool abbrev_names_dwo(const struct dfile *f)
{
	const struct sec *s = &f->s[SEC_ABBREV];
	struct cursor c = { s->p, s->p + s->size, false, f->be };

	while (s->p && c.p < c.end && !c.bad) {
		if (!uleb(&c))
			continue; /* the end of a table */
		uleb(&c); /* tag */
		skip(&c, 1); /* children */
		for (;;) {
			uint64_t name = uleb(&c), form = uleb(&c);

			if (c.bad || (!name && !form))
				break;
			if (name == DW_AT_dwo_name || name == DW_AT_GNU_dwo_name)
				return true;
			if (form == DW_FORM_implicit_const)
				sleb(&c);
		}
	}
	return false;
}

int ds__dwarf_skeletons(struct ds_context *ctx, Elf *debug, const char *name,
			struct ds__skeleton **out, size_t *n)
{
	/* What the unit scan and a skeleton's top DIE read. */
	const unsigned need = 1u << SEC_INFO | 1u << SEC_STR | 1u << SEC_LINE_STR |
			      1u << SEC_STR_OFFSETS | 1u << SEC_ADDR;
	struct abbrevs t = { .off = UINT64_MAX };
	struct ds__dwarf *D;
	size_t strbytes = 0;
	char *p;
	int err;

	*out = NULL;
	*n = 0;
	if (!debug || !ds__dw_plausible(ctx, debug, name))
		return 0;
	D = calloc(1, sizeof(*D));
	if (!D)
		return -ENOMEM;
	D->ctx = ctx;
	err = ds__dw_load_sections(ctx, name, &D->bytes, debug, &D->main, false, 1u << SEC_ABBREV);
	/* (Without, .debug_info is not loaded: nothing is scanned.) */
	if (!err && abbrev_names_dwo(&D->main))
		err = ds__dw_load_sections(ctx, name, &D->bytes, debug, &D->main, false, need);
	if (!err)
		err = ds__dw_scan_units(ctx, name, &D->bytes, &D->main, &t);
	if (!err)
		err = ds__dw_scan_skeletons(D, &t);
	ds__dw_abbrevs_release(&t);
	for (size_t i = 0; !err && i < D->nskels; i++) {
		const char *cd = D->main.units[D->skels[i].unit].comp_dir;

		strbytes += strlen(D->skels[i].dwo_name) + 1 + (cd ? strlen(cd) + 1 : 0);
	}
	if (!err && D->nskels) {
		*out = malloc(D->nskels * sizeof(**out) + strbytes);
		if (!*out)
			err = -ENOMEM;
	}
	p = *out ? (char *)(*out + D->nskels) : NULL;
	for (size_t i = 0; !err && i < D->nskels; i++) {
		const char *cd = D->main.units[D->skels[i].unit].comp_dir;
		struct ds__skeleton *k = &(*out)[i];

		k->id = D->skels[i].id;
		k->dwo_name = strcpy(p, D->skels[i].dwo_name);
		p += strlen(p) + 1;
		k->comp_dir = cd ? strcpy(p, cd) : NULL;
		p += cd ? strlen(p) + 1 : 0;
	}
	if (!err)
		*n = D->nskels;
	/* (What ds__dwarf_close() would let go of a D only scanned so far:
	 * it holds no auxiliary file.) */
	ds__dw_dfile_release(&D->main);
	free(D->skels);
	free(D);
	return err;
}

/* ------------------------------------------------ split units: building */

/*
 * A skeleton's CU is built from its split unit, read like any unit through
 * a dfile of its own: the split unit's sections (a .dwo file's, or its
 * contributions in the .dwp: .debug_info.dwo, .debug_abbrev.dwo,
 * .debug_str_offsets.dwo and .debug_rnglists.dwo slices, the shared
 * .debug_str.dwo) and the skeleton's .debug_addr (at its addr_base) and,
 * for DWARF 4, its .debug_ranges from DW_AT_GNU_ranges_base.  The line
 * rows, and the file table the split unit's DW_AT_call_file counts in, are
 * the skeleton's: gcc's .debug_line.dwo repeats the file names for the
 * type units, clang emits none (DWARF 5 §3.1.3: a split full unit takes
 * its line table from the skeleton).  Offsets inside the split unit are
 * relative to its slices, so nothing in it can reach another unit.
 */
struct split {
	struct dfile f; /* what the split unit is read from */
	struct unit u; /* the split unit, f's only unit */
};

/* The DWARF worker's caches hold offsets and strings of one file: a split
 * unit's are another file's. */
static void worker_forget(struct ds__dwarf_worker *W)
{
	W->cur.off = UINT64_MAX;
	for (int i = 0; i < ABBREV_CACHE; i++)
		W->other[i].off = UINT64_MAX;
	memset(W->names, 0, NAME_CACHE * sizeof(*W->names));
}

static struct sec slice_of(const struct sec *s, uint64_t off, uint64_t size)
{
	if (!s->p || off > s->size || size > s->size - off)
		return (struct sec){ NULL, 0, false };
	return (struct sec){ s->p + off, size, size && !s->p[off + size - 1] };
}

/* sp->f from the sections of src: whole (a .dwo), or the slices of a .dwp
 * row (sl); the skeleton's where the split unit reads them. */
static void split_sections(const struct ds__dwarf *D, const struct skel *sk, const struct dfile *src,
			   const struct ds__dwp_slice *sl, struct split *sp)
{
	static const int from[][2] = { { SEC_INFO, DS_DWP_INFO },
				       { SEC_ABBREV, DS_DWP_ABBREV },
				       { SEC_STR_OFFSETS, DS_DWP_STR_OFFSETS },
				       { SEC_RNGLISTS, DS_DWP_RNGLISTS },
				       { SEC_LINE, DS_DWP_LINE } };
	const struct sec *ranges = &D->main.s[SEC_RANGES];
	struct dfile *f = &sp->f;

	memset(f, 0, sizeof(*f));
	f->be = src->be;
	for (size_t k = 0; k < sizeof(from) / sizeof(from[0]); k++) {
		int i = from[k][0];

		f->s[i] = sl ? slice_of(&src->s[i], sl[from[k][1]].off, sl[from[k][1]].size)
			     : src->s[i];
	}
	f->s[SEC_STR] = src->s[SEC_STR];
	f->s[SEC_ADDR] = D->main.s[SEC_ADDR];
	f->s[SEC_LINE_STR] = D->main.s[SEC_LINE_STR];
	if (ranges->p && sk->ranges_base <= ranges->size)
		f->s[SEC_RANGES] = slice_of(ranges, sk->ranges_base, ranges->size - sk->ranges_base);
}

/* The split compile unit of sk in sp->f: its header and top DIE into sp->u
 * (its abbreviations into W->cur), completed from the skeleton sku.
 * false: none; *other: the id of a split unit that is there instead. */
static bool split_unit_find(struct ds__dwarf_worker *W, const struct skel *sk,
			    const struct unit *sku, struct split *sp, uint64_t *other, bool *any)
{
	struct unit *u = &sp->u;

	if (!find_split_unit(&sp->f, sk->id, &W->cur, u, other, any))
		return false;
	u->addr_base = sku->addr_base;
	u->base = sku->base;
	u->stmt_list = UINT64_MAX;
	if (!u->comp_dir)
		u->comp_dir = sku->comp_dir;
	sp->f.units = u;
	sp->f.nunits = 1;
	return true;
}

/* The split unit of sk in the package pkg, if it has it. */
static bool split_from_dwp(struct ds__dwarf_worker *W, const struct ds__dwarf_aux *pkg,
			   const struct skel *sk, const struct unit *sku, struct split *sp)
{
	struct ds__dwarf *D = W->D;
	const struct dfile *dwp = &pkg->f;
	struct ds__dwp_slice sl[DS_DWP_SECT_MAX + 1];
	uint64_t size[DS_DWP_SECT_MAX + 1], other = 0;
	uint32_t row;
	bool any = false;

	if (!(row = ds__dwp_index_find(&pkg->ix, sk->id)))
		return false;
	for (int i = 0; i <= DS_DWP_SECT_MAX; i++)
		size[i] = UINT64_MAX; /* not read */
	size[DS_DWP_INFO] = dwp->s[SEC_INFO].size;
	size[DS_DWP_ABBREV] = dwp->s[SEC_ABBREV].size;
	size[DS_DWP_STR_OFFSETS] = dwp->s[SEC_STR_OFFSETS].size;
	size[DS_DWP_RNGLISTS] = dwp->s[SEC_RNGLISTS].size;
	size[DS_DWP_LINE] = dwp->s[SEC_LINE].size;
	if (!ds__dwp_index_row(&pkg->ix, row, size, sl)) {
		ds_warn(D->ctx, "%s: the .dwp's unit %016llx lies outside its sections; not read",
			D->name, (unsigned long long)sk->id);
		return false;
	}
	split_sections(D, sk, dwp, sl, sp);
	if (split_unit_find(W, sk, sku, sp, &other, &any))
		return true;
	ds_warn(D->ctx, "%s: the .dwp's unit %016llx is not a split unit of that id; not read",
		D->name, (unsigned long long)sk->id);
	return false;
}

/* The .dwo of sk, pinned (its hold D's from the first build on; the store
 * checked its id when it opened it); NULL: none.  One that cannot be
 * opened again where it was (moved since the budget closed it) is asked
 * for anew.  Only the unit's builder (one at a time) sets sk->dwo. */
static const struct ds__dwarf_aux *dwo_pin(struct ds__dwarf *D, struct skel *sk,
					   const struct unit *sku)
{
	struct ds__dwo_want w = { sk->id, sk->dwo_name, sku->comp_dir, D->binary, D->name, D->name };
	struct ds__aux *h = atomic_load(&sk->dwo);
	const struct ds__dwarf_aux *A;

	if (!D->src.dwo)
		return NULL;
	if (h && (A = D->src.pin(D->src.arg, h)))
		return A;
	if (h)
		D->src.put(D->src.arg, h);
	h = D->src.dwo(D->src.arg, &w);
	atomic_store(&sk->dwo, h);
	return h ? D->src.pin(D->src.arg, h) : NULL;
}

static int skel_cmp(const void *key, const void *elem)
{
	size_t unit = *(const size_t *)key, other = ((const struct skel *)elem)->unit;

	return unit < other ? -1 : unit > other;
}

/* The skeleton of unit (D->skels are in unit order), NULL: none. */
struct skel *ds__dw_skel_of(const struct ds__dwarf *D, size_t unit)
{
	return D->nskels ? bsearch(&unit, D->skels, D->nskels, sizeof(*D->skels), skel_cmp) : NULL;
}

/* Build skeleton unit sku's scopes from its split unit (the line rows are
 * read already): its row of the package, else its .dwo, both pinned for
 * the build.  Without one (no .dwo, no .dwp, or the wrong id), none: its
 * addresses get the skeleton's lines and ELF symbols, and B is marked
 * partial (an index without them is not saved). */
int ds__dw_split_walk(struct build *bd, struct skel *sk, const struct unit *sku)
{
	struct ds__dwarf_worker *W = bd->W;
	struct ds__dwarf *D = W->D;
	const struct ds__dwarf_aux *pkg = NULL, *dwo = NULL;
	struct split sp;
	bool found = false;
	int err = 0;

	worker_forget(W);
	if (D->dwp_h && (pkg = D->src.pin(D->src.arg, D->dwp_h)))
		found = split_from_dwp(W, pkg, sk, sku, &sp);
	if (!found && (dwo = dwo_pin(D, sk, sku))) {
		uint64_t other = 0;
		bool any = false;

		split_sections(D, sk, &dwo->f, NULL, &sp);
		found = split_unit_find(W, sk, sku, &sp, &other, &any);
	}
	if (found) {
		struct ctxu cu = { &sp.f, &sp.u, false, NULL };
		const struct sec *info = &sp.f.s[SEC_INFO];
		struct cursor c = { info->p + sp.u.die, info->p + sp.u.end, false, sp.f.be };
		uint64_t code = uleb(&c);
		const struct abbrev *ab = code ? abbrev_get(&W->cur, code) : NULL;
		struct die top = { 0 };

		W->split = &sp.f;
		bd->cu = &cu;
		if (ab && ab->children && ds__dw_read_die(&cu, &W->cur, ab, &c, &top))
			err = ds__dw_walk_unit(bd, &W->cur, &c);
		W->split = NULL;
	} else {
		bd->B->partial = true;
		if (!atomic_exchange(&D->warned_missing, true))
			ds_warn(D->ctx,
				"%s: split unit %s (dwo id %016llx) not found (in a .dwp, under "
				"its comp_dir, beside the binary or its debuginfo, in the debug "
				"directories): its functions and inlines are unknown%s",
				D->name, sk->dwo_name, (unsigned long long)sk->id,
				D->nskels > 1 ? "; other units may miss theirs too" : "");
		else
			ds_debug(D->ctx, "%s: split unit %s (dwo id %016llx) not found", D->name,
				 sk->dwo_name, (unsigned long long)sk->id);
	}
	if (dwo)
		D->src.unpin(D->src.arg, atomic_load(&sk->dwo));
	if (pkg)
		D->src.unpin(D->src.arg, D->dwp_h);
	worker_forget(W);
	return err;
}
