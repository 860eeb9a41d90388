/* SPDX-License-Identifier: MIT */
/*
 * The DWARF reader's DIEs and units (see dwarf_int.h): abbreviation
 * tables, a DIE's attributes (read_form() itself is inline in
 * dwarf_int.h), range lists, unit headers with their top DIEs, and the
 * map of addresses to CUs from .debug_aranges or the CUs' own ranges.
 * Everything read is bounded by its section.
 */
#define _GNU_SOURCE
#include "dwarf_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ abbreviations */

/* The size of a form's value when it has one whatever the value, else -1. */
static int form_size(unsigned form, unsigned addr_size, unsigned off_size, unsigned version)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return (int)addr_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_GNU_strp_alt_:
	case DW_FORM_GNU_ref_alt_:
	case DW_FORM_strp_sup:
		return (int)off_size;
	case DW_FORM_ref_addr:
		return (int)(version <= 2 ? addr_size : off_size);
	default:
		return -1;
	}
}

static int abbrev_cmp(const void *x, const void *y)
{
	const struct abbrev *a = x, *b = y;

	return a->code < b->code ? -1 : a->code > b->code;
}

/* Parse the table at off into t (its memory reused); u: the unit it is
 * read for (the sizes of its forms).  upto: stop after the abbreviation of
 * that code, and leave t marked as nobody's table (t->off UINT64_MAX) if
 * it stopped early; 0: the whole table. */
static int abbrevs_read_upto(const struct dfile *f, uint64_t off, const struct unit *u,
			     struct abbrevs *t, uint64_t upto)
{
	struct cursor c = { f->s[SEC_ABBREV].p, f->s[SEC_ABBREV].p + f->s[SEC_ABBREV].size,
			    false, f->be };

	t->off = off;
	t->n = t->na = t->nsteps = 0;
	t->dense = true;
	t->addr_size = u->addr_size;
	t->off_size = u->off_size;
	t->version = u->version;
	if (off >= f->s[SEC_ABBREV].size)
		return 0;
	c.p += off;
	for (;;) {
		uint64_t code = uleb(&c);
		struct abbrev *ab;

		if (!code || c.bad)
			break;
		if (!(ab = ds__grow(t->v, &t->cap, t->n, sizeof(*t->v))))
			return -ENOMEM;
		t->v = ab;
		ab = &t->v[t->n++];
		ab->code = code;
		ab->tag = (uint32_t)uleb(&c);
		ab->children = rd(&c, 1) != 0;
		ab->first = (uint32_t)t->na;
		ab->n = 0;
		ab->fixed = 0;
		ab->step = (uint32_t)t->nsteps;
		ab->nsteps = 0;
		ab->sib = SIB_NONE;
		ab->sib_size = 0;
		if (code != t->n)
			t->dense = false;
		uint64_t run = 0; /* fixed bytes since the last form of varying size */
		bool low = false, high = false, ranges = false;

		for (;;) {
			uint64_t name = uleb(&c), form = uleb(&c);
			struct attrspec *as;

			if (c.bad || (!name && !form))
				break;
			if (!(as = ds__grow(t->a, &t->acap, t->na, sizeof(*t->a))))
				return -ENOMEM;
			t->a = as;
			as = &t->a[t->na++];
			as->name = name > UINT16_MAX ? 0 : (uint16_t)name;
			as->form = form > UINT16_MAX ? 0 : (uint16_t)form;
			as->implicit = form == DW_FORM_implicit_const ? sleb(&c) : 0;
			as->size = form_size(as->form, u->addr_size, u->off_size, u->version);
			ab->n++;
			if (as->name == DW_AT_sibling) {
				bool refn = as->form == DW_FORM_ref1 || as->form == DW_FORM_ref2 ||
					    as->form == DW_FORM_ref4 || as->form == DW_FORM_ref8;

				ab->sib = ab->sib == SIB_NONE && refn && ab->fixed >= 0 ? ab->fixed
											: SIB_SLOW;
				ab->sib_size = (uint8_t)(refn ? as->size : 0);
			}
			low |= as->name == DW_AT_low_pc;
			high |= as->name == DW_AT_high_pc;
			ranges |= as->name == DW_AT_ranges;
			if (ab->fixed >= 0)
				ab->fixed = as->size < 0 || ab->fixed > INT32_MAX / 2
						    ? -1
						    : ab->fixed + as->size;
			if (ab->nsteps == NO_STEPS)
				continue;
			if (as->size >= 0) {
				run += (uint64_t)as->size;
			} else {
				struct skipstep *v =
					ds__grow(t->steps, &t->stepcap, t->nsteps, sizeof(*v));

				if (!v)
					return -ENOMEM;
				t->steps = v;
				t->steps[t->nsteps++] = (struct skipstep){ (uint32_t)run, as->form };
				ab->nsteps++;
				run = 0;
			}
			if (run > UINT32_MAX / 2)
				ab->nsteps = NO_STEPS;
		}
		ab->tail = (uint32_t)run;
		ab->scope = (ab->tag == DW_TAG_subprogram || ab->tag == DW_TAG_inlined_subroutine) &&
			    ((low && high) || ranges);
		if (c.bad)
			break;
		if (upto && code == upto) {
			t->off = UINT64_MAX; /* (a part of it) */
			break;
		}
	}
	if (!t->dense)
		qsort(t->v, t->n, sizeof(*t->v), abbrev_cmp);
	return 0;
}

int ds__dw_abbrevs_read(const struct dfile *f, uint64_t off, const struct unit *u,
			struct abbrevs *t)
{
	return abbrevs_read_upto(f, off, u, t, 0);
}

void ds__dw_abbrevs_release(struct abbrevs *t)
{
	free(t->v);
	free(t->a);
	free(t->steps);
}

/* ----------------------------------------------------------- attributes */

static uint64_t addrx(const struct ctxu *cu, uint64_t idx, bool *ok)
{
	const struct unit *u = cu->u;

	return read_at(&cu->f->s[SEC_ADDR], u->addr_base + idx * u->addr_size, u->addr_size,
		       cu->f->be, ok);
}

/* One DIE at c (its abbreviation code read already: ab), attributes into
 * d.  False when it cannot be read. */
bool ds__dw_read_die(const struct ctxu *cu, const struct abbrevs *t, const struct abbrev *ab,
		     struct cursor *c, struct die *d)
{
	const struct attrspec *as = t->a + ab->first;

	d->tag = ab->tag;
	d->children = ab->children;
	for (uint32_t i = 0; i < ab->n; i++) {
		uint64_t v;
		const char *s = NULL;
		int kind = read_form(cu, c, as[i].form, as[i].implicit, &v, &s);

		if (c->bad)
			return false;
		switch (as[i].name) {
		case DW_AT_name:
			d->name = s;
			d->name_xf = kind == V_STRX;
			d->name_x = v;
			break;
		case DW_AT_linkage_name:
			d->linkage = s;
			d->linkage_xf = kind == V_STRX;
			d->linkage_x = v;
			break;
		case DW_AT_MIPS_linkage_name:
			d->mips = s;
			d->mips_xf = kind == V_STRX;
			d->mips_x = v;
			break;
		case DW_AT_low_pc:
			d->has_low = kind == V_ADDR || kind == V_ADDRX;
			d->low_index = kind == V_ADDRX;
			d->low = v;
			break;
		case DW_AT_high_pc:
			d->has_high = kind == V_ADDR || kind == V_ADDRX || kind == V_CONST;
			d->high_is_addr = kind == V_ADDR || kind == V_ADDRX;
			d->high_index = kind == V_ADDRX;
			d->high = v;
			break;
		case DW_AT_ranges:
			d->has_ranges = kind == V_SECOFF || kind == V_CONST || kind == V_RNGX;
			d->ranges_index = kind == V_RNGX;
			d->ranges = v;
			break;
		case DW_AT_abstract_origin:
			if (kind == V_REF || kind == V_REF_ALT) {
				d->origin = v + 1; /* 0: none */
				d->origin_alt = kind == V_REF_ALT;
			}
			break;
		case DW_AT_specification:
			if (kind == V_REF || kind == V_REF_ALT) {
				d->spec = v + 1;
				d->spec_alt = kind == V_REF_ALT;
			}
			break;
		case DW_AT_sibling:
			if (kind == V_REF)
				d->sibling = v;
			break;
		case DW_AT_call_file:
			d->call_file = v;
			break;
		case DW_AT_call_line:
			d->call_line = v;
			break;
		case DW_AT_call_column:
			d->call_column = v;
			break;
		case DW_AT_GNU_discriminator:
			d->disc = v;
			break;
		case DW_AT_language:
			d->lang = v;
			break;
		case DW_AT_stmt_list:
			d->has_stmt = kind == V_SECOFF || kind == V_CONST;
			d->stmt_list = v;
			break;
		case DW_AT_comp_dir:
			d->comp_dir = s;
			d->comp_dir_xf = kind == V_STRX;
			d->comp_dir_x = v;
			break;
		case DW_AT_str_offsets_base:
			d->has_sbase = true;
			d->str_offsets_base = v;
			break;
		case DW_AT_addr_base:
		case DW_AT_GNU_addr_base:
			d->has_abase = true;
			d->addr_base = v;
			break;
		case DW_AT_rnglists_base:
			d->has_rbase = true;
			d->rnglists_base = v;
			break;
		default:
			break;
		}
	}
	return true;
}

/* The unit of f holding .debug_info offset off. */
const struct unit *ds__dw_unit_of(const struct dfile *f, uint64_t off)
{
	size_t lo = 0, hi = f->nunits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->units[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || off >= f->units[lo - 1].end)
		return NULL;
	return &f->units[lo - 1];
}

/* ----------------------------------------------------------- range lists */

/* DWARF 2-4 .debug_ranges at off, base the unit's. */
static int ranges_v4(const struct ctxu *cu, uint64_t off, range_fn fn, void *arg)
{
	const struct sec *s = &cu->f->s[SEC_RANGES];
	struct cursor c = { s->p, s->p + s->size, false, cu->f->be };
	unsigned as = cu->u->addr_size;
	uint64_t base = cu->u->base, maxa = as == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * as)) - 1;
	int err;

	if (!s->p || off >= s->size)
		return 0;
	c.p += off;
	while (!c.bad) {
		uint64_t a = rd(&c, as), b = rd(&c, as);

		if (c.bad || (!a && !b))
			break;
		if (a == maxa) {
			base = b;
			continue;
		}
		if ((err = fn(arg, base + a, base + b)))
			return err;
	}
	return 0;
}

/* DWARF 5 .debug_rnglists at off. */
static int ranges_v5(const struct ctxu *cu, uint64_t off, range_fn fn, void *arg)
{
	const struct sec *s = &cu->f->s[SEC_RNGLISTS];
	struct cursor c = { s->p, s->p + s->size, false, cu->f->be };
	unsigned as = cu->u->addr_size;
	uint64_t base = cu->u->base;
	int err = 0;
	bool ok = true;

	if (!s->p || off >= s->size)
		return 0;
	c.p += off;
	while (!c.bad && !err && ok) {
		unsigned kind = (unsigned)rd(&c, 1);
		uint64_t a, b;

		switch (kind) {
		case DW_RLE_end_of_list:
			return 0;
		case DW_RLE_base_addressx:
			base = addrx(cu, uleb(&c), &ok);
			break;
		case DW_RLE_startx_endx:
			a = addrx(cu, uleb(&c), &ok);
			b = ok ? addrx(cu, uleb(&c), &ok) : 0;
			if (ok)
				err = fn(arg, a, b);
			break;
		case DW_RLE_startx_length:
			a = addrx(cu, uleb(&c), &ok);
			b = uleb(&c);
			if (ok)
				err = fn(arg, a, a + b);
			break;
		case DW_RLE_offset_pair:
			a = uleb(&c);
			b = uleb(&c);
			err = fn(arg, base + a, base + b);
			break;
		case DW_RLE_base_address:
			base = rd(&c, as);
			break;
		case DW_RLE_start_end:
			a = rd(&c, as);
			b = rd(&c, as);
			err = fn(arg, a, b);
			break;
		case DW_RLE_start_length:
			a = rd(&c, as);
			b = uleb(&c);
			err = fn(arg, a, a + b);
			break;
		default:
			return 0; /* unknown entry: the list ends */
		}
	}
	return err;
}

/* The address ranges of d, as libdw's dwarf_ranges() gives them:
 * low_pc/high_pc, else DW_AT_ranges. */
int ds__dw_die_ranges(const struct ctxu *cu, const struct die *d, range_fn fn, void *arg)
{
	if (d->has_low && d->has_high) {
		bool ok = true;
		uint64_t lo = d->low_index ? addrx(cu, d->low, &ok) : d->low, hi;

		if (!ok)
			return 0;
		hi = d->high_is_addr ? (d->high_index ? addrx(cu, d->high, &ok) : d->high)
				     : lo + d->high;
		return ok ? fn(arg, lo, hi) : 0;
	}
	if (!d->has_ranges)
		return 0;
	if (cu->u->version >= 5) {
		uint64_t off = d->ranges;

		if (d->ranges_index) {
			bool ok;
			uint64_t rel = read_at(&cu->f->s[SEC_RNGLISTS],
					       cu->u->rnglists_base + d->ranges * cu->u->off_size,
					       cu->u->off_size, cu->f->be, &ok);

			if (!ok)
				return 0;
			off = cu->u->rnglists_base + rel;
		}
		return ranges_v5(cu, off, fn, arg);
	}
	return ranges_v4(cu, d->ranges, fn, arg);
}

/* --------------------------------------------------------------- units */

/* binutils' mangle_style(): the languages whose names are mangled. */
static bool mangled_language(uint64_t lang)
{
	switch (lang) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_ObjC_plus_plus:
	case DW_LANG_Java:
	case DW_LANG_D:
	case DW_LANG_Rust:
		return true;
	default:
		return false;
	}
}

/* Header and top DIE of the unit at off; false when this cannot be a
 * unit, which ends the scan (the next unit's offset comes from this one's
 * length: nothing after it can be trusted).  A 4 GiB .debug_info of zeros
 * reads as units of length 0 and version 0: the first ends it. */
bool ds__dw_read_unit(const struct dfile *f, uint64_t off, struct unit *u, struct abbrevs *scratch)
{
	const struct sec *info = &f->s[SEC_INFO];
	struct cursor c = { info->p + off, info->p + info->size, false, f->be };
	uint64_t len = rd(&c, 4);
	struct die d = { 0 };
	struct ctxu cu = { f, u, false, NULL };
	const struct abbrev *ab;
	uint64_t code;

	memset(u, 0, sizeof(*u));
	u->off = off;
	u->off_size = 4;
	if (len == 0xffffffff) {
		len = rd(&c, 8);
		u->off_size = 8;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p) || len < 7)
		return false;
	c.end = c.p + len;
	u->end = (uint64_t)(c.end - info->p);
	u->version = (uint8_t)rd(&c, 2);
	if (u->version < 2 || u->version > 5)
		return false;
	if (u->version >= 5) {
		u->unit_type = (uint8_t)rd(&c, 1);
		u->addr_size = (uint8_t)rd(&c, 1);
		u->abbrev_off = rd(&c, u->off_size);
		if (u->unit_type == DW_UT_skeleton || u->unit_type == DW_UT_split_compile)
			skip(&c, 8);
		else if (u->unit_type == DW_UT_type || u->unit_type == DW_UT_split_type)
			skip(&c, 8 + u->off_size);
	} else {
		u->unit_type = DW_UT_compile;
		u->abbrev_off = rd(&c, u->off_size);
		u->addr_size = (uint8_t)rd(&c, 1);
	}
	if (c.bad || !u->addr_size || u->addr_size > 8)
		return false;
	u->die = (uint64_t)(c.p - info->p);
	u->stmt_list = UINT64_MAX;
	/* The top DIE: its abbreviation table parsed for it alone, up to its
	 * code (usually the first: libc6-dbg's 1,600 tables in full were 12%
	 * of a one-address query). */
	code = uleb(&c);
	if (scratch->off != u->abbrev_off &&
	    abbrevs_read_upto(f, u->abbrev_off, u, scratch, code)) {
		scratch->off = UINT64_MAX;
		return true; /* no memory: a unit without its top DIE's facts */
	}
	ab = code ? abbrev_get(scratch, code) : NULL;
	if (!ab || !ds__dw_read_die(&cu, scratch, ab, &c, &d))
		return true;
	if (d.has_sbase)
		u->str_offsets_base = d.str_offsets_base;
	else if (f->s[SEC_STR_OFFSETS].size >= 8 && u->version >= 5)
		u->str_offsets_base = 8; /* after the (32-bit) section header */
	u->addr_base = d.addr_base;
	if (d.has_rbase)
		u->rnglists_base = d.rnglists_base;
	else if (u->version >= 5)
		u->rnglists_base = 12; /* after the (32-bit) section header */
	u->mangled = mangled_language(d.lang);
	if (d.has_stmt)
		u->stmt_list = d.stmt_list;
	u->comp_dir = resolve_strx(&cu, d.comp_dir_xf, d.comp_dir_x, d.comp_dir);
	if (d.has_low) {
		bool ok = true;

		u->base = d.low_index ? addrx(&cu, d.low, &ok) : d.low;
		if (!ok)
			u->base = 0;
	}
	return true;
}

/* f's unit headers and top DIEs; their table's bytes added to *bytes. */
int ds__dw_scan_units(struct ds_context *ctx, const char *name, uint64_t *bytes, struct dfile *f,
		      struct abbrevs *scratch)
{
	const struct sec *info = &f->s[SEC_INFO];
	uint64_t off = 0;
	size_t cap = 0;

	while (info->p && off < info->size) {
		struct unit u;

		if (!ds__dw_read_unit(f, off, &u, scratch)) {
			ds_debug(ctx,
				 "%s: .debug_info offset 0x%llx is no unit header: the CU scan "
				 "stops there, %llu bytes unread",
				 name, (unsigned long long)off,
				 (unsigned long long)(info->size - off));
			break;
		}
		if (f->nunits == cap) {
			struct unit *v = realloc(f->units, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			f->units = v;
		}
		f->units[f->nunits++] = u;
		off = u.end;
	}
	*bytes += cap * sizeof(struct unit);
	return 0;
}

struct range_add {
	struct ds__dwarf *D;
	uint32_t cu;
	int n;
};

static int range_add(void *arg, uint64_t lo, uint64_t hi)
{
	struct range_add *ra = arg;
	struct ds__dwarf *D = ra->D;

	/* Empty, or code --gc-sections dropped (at 0). */
	if (lo >= hi || lo == 0)
		return 0;
	if (D->nranges == D->rcap) {
		size_t cap = D->rcap ? 2 * D->rcap : 256;
		struct ds__cu_range *v = realloc(D->ranges, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		D->ranges = v;
		D->rcap = cap;
	}
	D->ranges[D->nranges++] = (struct ds__cu_range){ lo, hi, ra->cu, 0 };
	ra->n++;
	return 0;
}

static int range_cmp(const void *x, const void *y)
{
	const struct ds__cu_range *a = x, *b = y;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->cu < b->cu ? -1 : a->cu > b->cu;
}

/* .debug_aranges: one set per CU, its address ranges.  Sets naming an
 * offset that is no unit are ignored; the units listed are marked.  Each
 * range is added for the unit's code number, which is only known after:
 * ranges[].cu holds the unit index until then. */
static int read_aranges(struct ds__dwarf *D, struct dfile *f)
{
	const struct sec *s = &f->s[SEC_ARANGES];
	struct cursor c = { s->p, s->p + s->size, false, f->be };

	while (s->p && c.p < c.end && !c.bad) {
		uint64_t len = rd(&c, 4), cuoff;
		unsigned osz = 4, as, segsz, version;
		struct cursor set;
		struct unit *u;
		size_t start;

		if (len == 0xffffffff) {
			len = rd(&c, 8);
			osz = 8;
		}
		if (c.bad || len > (uint64_t)(c.end - c.p))
			break;
		set = (struct cursor){ c.p, c.p + len, false, f->be };
		start = (size_t)(c.p - s->p) - (osz == 8 ? 12 : 4);
		c.p += len;
		version = (unsigned)rd(&set, 2);
		cuoff = rd(&set, osz);
		as = (unsigned)rd(&set, 1);
		segsz = (unsigned)rd(&set, 1);
		u = (struct unit *)ds__dw_unit_of(f, cuoff);
		if (set.bad || version != 2 || !as || as > 8 || segsz || !u || u->off != cuoff)
			continue;
		/* Tuples start at a multiple of twice the address size from
		 * the set's start. */
		{
			size_t at = (size_t)(set.p - s->p) - start, pad = (2 * as - at % (2 * as)) % (2 * as);

			skip(&set, pad);
		}
		u->has_aranges = true;
		while (!set.bad) {
			uint64_t lo = rd(&set, as), n = rd(&set, as);
			struct range_add ra = { D, (uint32_t)(u - f->units), 0 };

			if (set.bad || (!lo && !n))
				break;
			if (range_add(&ra, lo, lo + n))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Which units have code, and where: .debug_aranges for those it lists,
 * the top DIE's ranges for the others.  A unit with neither has no code
 * (gcc and clang give every CU with code a low_pc or ranges). */
int ds__dw_map_units(struct ds__dwarf *D)
{
	struct dfile *f = &D->main;
	size_t *code_of = calloc(f->nunits ? f->nunits : 1, sizeof(*code_of));
	struct abbrevs t = { .off = UINT64_MAX };
	int err = read_aranges(D, f);

	if (!code_of)
		return -ENOMEM;
	for (size_t i = 0; i < f->nunits && !err; i++) {
		const struct unit *u = &f->units[i];
		struct ctxu cu = { f, u, false, NULL };
		struct cursor c = { f->s[SEC_INFO].p + u->die, f->s[SEC_INFO].p + u->end, false,
				    f->be };
		struct range_add ra = { D, (uint32_t)i, 0 };
		struct die d = { 0 };
		const struct abbrev *ab;
		uint64_t code;

		if (u->has_aranges || (u->unit_type != DW_UT_compile && u->unit_type != DW_UT_skeleton))
			continue;
		if (t.off != u->abbrev_off && (err = ds__dw_abbrevs_read(f, u->abbrev_off, u, &t)))
			break;
		code = uleb(&c);
		ab = code ? abbrev_get(&t, code) : NULL;
		if (ab && ds__dw_read_die(&cu, &t, ab, &c, &d))
			err = ds__dw_die_ranges(&cu, &d, range_add, &ra);
	}
	ds__dw_abbrevs_release(&t);
	/* Number the units that got ranges, in unit order. */
	for (size_t i = 0; i < D->nranges; i++)
		code_of[D->ranges[i].cu] = 1;
	D->code_units = malloc((f->nunits ? f->nunits : 1) * sizeof(*D->code_units));
	if (!D->code_units)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < f->nunits; i++)
		if (code_of[i]) {
			code_of[i] = D->ncode;
			D->code_units[D->ncode++] = i;
		}
	for (size_t i = 0; !err && i < D->nranges; i++)
		D->ranges[i].cu = (uint32_t)code_of[D->ranges[i].cu];
	free(code_of);
	if (!err && D->nranges)
		qsort(D->ranges, D->nranges, sizeof(*D->ranges), range_cmp);
	D->bytes += D->rcap * sizeof(*D->ranges) + f->nunits * sizeof(size_t);
	return err;
}
