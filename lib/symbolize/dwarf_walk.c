/* SPDX-License-Identifier: MIT */
/*
 * The DWARF reader's DIE walk (see dwarf_int.h): one CU's DIEs, depth
 * first, into the scopes of a struct sym_build (functions and inlined
 * instances, with their ranges and callers), leaves it has no use for
 * skipped without looking at them; and the scopes' names, resolved
 * through abstract_origin and specification, in this file or the alt
 * file, with a cache.
 */
#define _GNU_SOURCE
#include "dwarf_int.h"

#include <errno.h>
#include <string.h>

#define CHAIN_MAX 16 /* abstract_origin/specification hops, as libdw */

/* Over one value of a form whose size varies. */
static inline __attribute__((always_inline)) void skip_form(const struct ctxu *cu, struct cursor *c, unsigned form)
{
	switch (form) {
	case DW_FORM_udata:
	case DW_FORM_sdata:
	case DW_FORM_strx:
	case DW_FORM_GNU_str_index_:
	case DW_FORM_addrx:
	case DW_FORM_GNU_addr_index_:
	case DW_FORM_ref_udata:
	case DW_FORM_rnglistx:
	case DW_FORM_loclistx:
		/* (LEB128 bytes, as uleb() and sleb() read them.) */
		while (c->p < c->end)
			if (!(*c->p++ & 0x80))
				return;
		c->bad = true;
		return;
	case DW_FORM_string:
		cstr(c);
		return;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		skip(c, uleb(c));
		return;
	case DW_FORM_block1:
		skip(c, rd(c, 1));
		return;
	default: { /* indirect, and forms that cannot be sized */
		uint64_t v;
		const char *s;

		read_form(cu, c, form, 0, &v, &s);
		return;
	}
	}
}

/* Over the attributes of a DIE whose size varies (see skip_die()). */
static __attribute__((noinline)) void skip_varying(const struct ctxu *cu, const struct abbrevs *t,
						   const struct abbrev *ab, struct cursor *c)
{
	const struct attrspec *as = t->a + ab->first;

	if (ab->nsteps != NO_STEPS) {
		const struct skipstep *st = t->steps + ab->step;

		for (uint32_t i = 0; i < ab->nsteps && !c->bad; i++) {
			skip(c, st[i].pre);
			skip_form(cu, c, st[i].form);
		}
		skip(c, ab->tail);
		return;
	}
	for (uint32_t i = 0; i < ab->n && !c->bad; i++) {
		uint64_t v;
		const char *s;

		if (as[i].size >= 0)
			skip(c, (uint64_t)as[i].size);
		else
			read_form(cu, c, as[i].form, as[i].implicit, &v, &s);
	}
}

/* Over a DIE's attributes without looking at them: all in one step when
 * they have a fixed size, else each fixed-size run in one step. */
static inline __attribute__((always_inline)) void
skip_die(const struct ctxu *cu, const struct abbrevs *t, const struct abbrev *ab, struct cursor *c)
{
	if (ab->fixed >= 0)
		skip(c, (uint64_t)ab->fixed);
	else
		skip_varying(cu, t, ab, c);
}

/* Over the DIE at c (at off, its code read: ab), for its DW_AT_sibling
 * alone (0: none).  False when it cannot be read. */
static bool die_sibling(const struct ctxu *cu, const struct abbrevs *t, const struct abbrev *ab,
			struct cursor *c, uint64_t off, uint64_t *sibling)
{
	const unsigned char *start = c->p;

	*sibling = 0;
	if (ab->sib == SIB_SLOW) {
		struct die d;

		memset(&d, 0, sizeof(d));
		d.off = off;
		if (!ds__dw_read_die(cu, t, ab, c, &d))
			return false;
		*sibling = d.sibling;
		return true;
	}
	skip_die(cu, t, ab, c);
	if (c->bad)
		return false;
	if (ab->sib >= 0) {
		/* (Inside what was just skipped: the attributes before it
		 * have fixed sizes.) */
		struct cursor v = { start + ab->sib, c->p, false, c->be };

		*sibling = cu->u->off + rd(&v, ab->sib_size);
	}
	return true;
}

/* ----------------------------------------------------------- DIE names */

/* The abbreviation table of another unit (alt: in the alt file). */
static const struct abbrevs *other_abbrevs(struct ds__dwarf_worker *W, const struct dfile *f,
					   const struct unit *u, bool alt)
{
	uint64_t off = u->abbrev_off, key = alt ? off | (1ull << 63) : off;
	struct abbrevs *oldest = &W->other[0];

	if (!alt && W->cur.off == off)
		return &W->cur;
	for (int i = 0; i < ABBREV_CACHE; i++) {
		struct abbrevs *t = &W->other[i];

		if (t->off == key) {
			t->age = ++W->clock;
			return t;
		}
		if (t->age < oldest->age)
			oldest = t;
	}
	if (ds__dw_abbrevs_read(f, off, u, oldest)) {
		oldest->off = UINT64_MAX;
		return NULL;
	}
	oldest->off = key;
	oldest->age = ++W->clock;
	return oldest;
}

/* The DIE at off (in the alt file if alt), read into d with its unit in
 * *cu.  False when there is none. */
static bool die_at(struct ds__dwarf_worker *W, uint64_t off, bool alt, struct ctxu *cu,
		   struct die *d)
{
	struct ds__dwarf *D = W->D;
	const struct dfile *f = alt ? D->alt : W->split ? W->split : &D->main;
	const struct unit *u;
	const struct abbrevs *t;
	const struct abbrev *ab;
	struct cursor c;
	uint64_t code;

	if (alt && !D->alt)
		return false;
	u = ds__dw_unit_of(f, off);
	if (!u || off < u->die)
		return false;
	t = other_abbrevs(W, f, u, alt);
	if (!t)
		return false;
	c = (struct cursor){ f->s[SEC_INFO].p + off, f->s[SEC_INFO].p + u->end, false, f->be };
	code = uleb(&c);
	ab = code ? abbrev_get(t, code) : NULL;
	*cu = (struct ctxu){ f, u, alt, D->alt };
	memset(d, 0, sizeof(*d));
	d->off = off;
	return ab && ds__dw_read_die(cu, t, ab, &c, d);
}

/* Fill what is still missing of the three names from d. */
static void names_from(const struct ctxu *cu, const struct die *d, const char **name,
		       const char **linkage, const char **mips)
{
	if (!*linkage && (d->linkage || d->linkage_xf))
		*linkage = resolve_strx(cu, d->linkage_xf, d->linkage_x, d->linkage);
	if (!*mips && (d->mips || d->mips_xf))
		*mips = resolve_strx(cu, d->mips_xf, d->mips_x, d->mips);
	if (!*name && (d->name || d->name_xf))
		*name = resolve_strx(cu, d->name_xf, d->name_x, d->name);
}

/* The DIE d refers to for its names: abstract_origin, else
 * specification.  False when none. */
static bool name_ref(const struct ctxu *cu, const struct die *d, uint64_t *ref, bool *alt)
{
	if (!d->origin && !d->spec)
		return false;
	*ref = d->origin ? d->origin - 1 : d->spec - 1;
	/* A reference inside the alt file stays there (dwz puts no
	 * references back into the files that use it). */
	*alt = cu->is_alt || (d->origin ? d->origin_alt : d->spec_alt);
	return true;
}

/* What libdw's dwarf_attr_integrate() finds for the names: the first
 * DW_AT_linkage_name, DW_AT_MIPS_linkage_name and DW_AT_name along the
 * chain of abstract_origin (else specification) from d0, up to CHAIN_MAX
 * hops.  What the chain from d0's reference gives is cached by that
 * reference: many inlined instances share one abstract origin. */
static void die_names(struct ds__dwarf_worker *W, const struct ctxu *cu0, const struct die *d0,
		      const char **name, const char **linkage, const char **mips)
{
	struct name_slot *slot;
	uint64_t ref, key;
	bool alt;

	*name = *linkage = *mips = NULL;
	names_from(cu0, d0, name, linkage, mips);
	if ((*linkage && *name) || !name_ref(cu0, d0, &ref, &alt))
		return;
	key = (ref + 1) | (alt ? 1ull << 63 : 0);
	slot = &W->names[(key * 0x9e3779b97f4a7c15ull) >> 40 & (NAME_CACHE - 1)];
	if (slot->key != key) {
		struct ctxu cu;
		struct die d;
		const char *nm = NULL, *lk = NULL, *mp = NULL;

		for (int hop = 1; hop <= CHAIN_MAX && die_at(W, ref, alt, &cu, &d); hop++) {
			names_from(&cu, &d, &nm, &lk, &mp);
			if ((lk && nm) || !name_ref(&cu, &d, &ref, &alt))
				break;
		}
		*slot = (struct name_slot){ key, nm, lk, mp };
	}
	if (!*linkage)
		*linkage = slot->linkage;
	if (!*mips)
		*mips = slot->mips;
	if (!*name)
		*name = slot->name;
}

/* ------------------------------------------------------------ the walk */

/* Which entry of the enclosing scope's ranges holds lo. */
static uint32_t parent_piece(const struct sym_build *B, uint32_t first, uint32_t count,
			     uint64_t lo)
{
	for (uint32_t i = first; i < first + count; i++)
		if (B->scopes[i].lo <= lo && lo < B->scopes[i].hi)
			return i;
	return NO_PARENT; /* outside its caller: broken DWARF, keep it apart */
}

struct scope_add {
	struct build *bd;
	struct scope proto;
	uint32_t pfirst, pcount, count;
};

static int scope_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct scope_add *sa = arg;
	struct sym_build *B = sa->bd->B;
	struct scope *sc;

	if (lo >= hi || lo == 0)
		return 0; /* empty, or code --gc-sections dropped (at 0) */
	if (GROW(B, scopes, nscopes, scap))
		return -ENOMEM;
	sc = &B->scopes[B->nscopes++];
	*sc = sa->proto;
	sc->lo = lo;
	sc->hi = hi;
	/* A function nested in another (GNU C) has code of its own
	 * elsewhere: only inlined instances have an enclosing scope. */
	sc->parent = sc->inlined && sa->pcount ? parent_piece(B, sa->pfirst, sa->pcount, lo)
					       : NO_PARENT;
	sa->count++;
	return 0;
}

static int add_scope(struct build *bd, const struct die *d, bool inlined, uint32_t pfirst,
		     uint32_t pcount, uint8_t depth, uint32_t *first, uint32_t *count)
{
	struct sym_build *B = bd->B;
	struct scope_add sa = { .bd = bd, .pfirst = pfirst, .pcount = pcount };
	const char *name, *linkage, *mips;
	int err;

	*first = (uint32_t)B->nscopes;
	*count = 0;
	if (!(d->has_low && d->has_high) && !d->has_ranges)
		return 0; /* no code: not worth its names */
	die_names(bd->W, bd->cu, d, &name, &linkage, &mips);
	memset(&sa.proto, 0, sizeof(sa.proto));
	if (linkage || mips) {
		sa.proto.name = ds__symbols_intern_stable(B, linkage ? linkage : mips);
		sa.proto.is_linkage = 1;
	} else {
		/* binutils' is_linkage: a plain name in a language without
		 * mangling is one too. */
		sa.proto.name = ds__symbols_intern_stable(B, name);
		sa.proto.is_linkage = !bd->cu->u->mangled;
	}
	sa.proto.inlined = inlined;
	sa.proto.depth = depth;
	if (inlined) {
		sa.proto.call_file = d->call_file < bd->nfileoff ? bd->fileoff[d->call_file] : 0;
		sa.proto.call_line = d->call_line > UINT32_MAX ? 0 : (uint32_t)d->call_line;
		sa.proto.call_discriminator = d->disc > UINT32_MAX ? 0 : (uint32_t)d->disc;
		sa.proto.call_column = d->call_column > UINT16_MAX ? 0 : (uint16_t)d->call_column;
	}
	err = ds__dw_die_ranges(bd->cu, d, scope_range, &sa);
	*count = sa.count;
	return err;
}

/* Functions, blocks and namespaces hold scopes, and so do classes: the
 * code of a local class's methods (a lambda's operator()) is described
 * inside the class inside the function.  Variables and other types do
 * not. */
static bool holds_scopes(uint32_t tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_module:
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return true;
	default:
		return false;
	}
}

/* Depth-first over the unit's DIEs, keeping the innermost enclosing
 * function or inlined instance (its ranges) for each level. */
int ds__dw_walk_unit(struct build *bd, const struct abbrevs *t, struct cursor *c)
{
	struct level {
		uint32_t first, count; /* the enclosing scope's ranges */
		uint8_t depth;
		bool skip; /* a subtree we only read through */
	} stack[MAX_DEPTH];
	int sp = 0, err = 0;
	const unsigned char *info = bd->cu->f->s[SEC_INFO].p;

	stack[0] = (struct level){ 0, 0, 0, false };
	while (!err && c->p < c->end) {
		struct die d;
		const struct abbrev *ab;
		uint64_t code;
		struct level *lv;

		uint64_t off = (uint64_t)(c->p - info);

		code = uleb(c);
		if (c->bad)
			break;
		if (!code) {
			if (--sp < 0)
				break; /* the top DIE's children end */
			continue;
		}
		ab = abbrev_get(t, code);
		if (!ab)
			break; /* unreadable from here */
		lv = &stack[sp];
		if (!ab->scope || lv->skip) {
			/* A DIE that adds no scope (most are leaves: parameters,
			 * variables, members) gives the walk at most where its
			 * children end. */
			uint64_t sibling;

			if (!ab->children) {
				skip_die(bd->cu, t, ab, c);
				if (c->bad)
					break;
				continue;
			}
			if (!lv->skip && holds_scopes(ab->tag) && sp + 1 < MAX_DEPTH) {
				skip_die(bd->cu, t, ab, c);
				if (c->bad)
					break;
				stack[sp + 1] = (struct level){ lv->first, lv->count, lv->depth, false };
				sp++;
				continue;
			}
			if (!die_sibling(bd->cu, t, ab, c, off, &sibling))
				break;
			/* Children that hold no scopes (or too deep): over them
			 * when the DIE says where they end. */
			if (sibling > off && info + sibling <= c->end && info + sibling > c->p)
				c->p = info + sibling;
			else if (sp + 1 < MAX_DEPTH) {
				stack[sp + 1] = lv->skip ? *lv : (struct level){ 0, 0, 0, true };
				sp++;
			} else
				break;
			continue;
		}
		memset(&d, 0, sizeof(d));
		d.off = off;
		if (!ds__dw_read_die(bd->cu, t, ab, c, &d))
			break;
		{
			uint32_t first = lv->first, count = lv->count;
			uint8_t depth = lv->depth;
			uint32_t f, n;

			err = add_scope(bd, &d, d.tag == DW_TAG_inlined_subroutine, first, count, depth,
					&f, &n);
			if (n) {
				first = f;
				count = n;
				depth = d.tag == DW_TAG_subprogram ? 1 : depth < 255 ? depth + 1 : depth;
			}
			if (!d.children)
				continue;
			if (sp + 1 < MAX_DEPTH) { /* (they hold scopes) */
				stack[++sp] = (struct level){ first, count, depth, false };
				continue;
			}
			if (d.sibling > d.off && info + d.sibling <= c->end && info + d.sibling > c->p)
				c->p = info + d.sibling;
			else
				break;
		}
	}
	return err;
}
