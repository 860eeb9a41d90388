/* SPDX-License-Identifier: MIT */
/*
 * Reading DWARF, the library's only reader of it: our own reader of the
 * raw sections, DWARF 2 to 5, one CU at a time.  This file is its top:
 *   - ds__dwarf_open() takes the sections of the debuginfo, decompressing
 *     the compressed ones (zlib, zstd; several at once on several
 *     threads), reads every unit header and top DIE, and maps addresses to
 *     CUs from .debug_aranges, or from the CUs' own ranges for those it
 *     does not list.  The auxiliary files it names (the dwz alt file, the
 *     .dwp package, the .dwo files of split units) come from the store,
 *     which finds, opens (ds__dwarf_aux_open() reads them) and shares
 *     them;
 *   - ds__dwarf_build_unit() reads one CU: an abbreviation-driven walk of
 *     its DIEs for the ranges of functions and inlined instances (one pass
 *     over each DIE's attributes, names resolved through abstract_origin
 *     and specification, in this file or the alt file, with a cache), and
 *     its line program, into a struct sym_build.
 * Everything read is bounded by its section: malformed DWARF ends what is
 * read of a unit (or of the unit table), never the process.  Strings are
 * interned into the CU's pool, so nothing here outlives the build but the
 * open sections, which ds__dwarf_close() lets go.  The reader's other
 * files, one concern each, are those dwarf_int.h lists.
 *
 * libdw was the reader before: its DIE walk (one call per attribute, two
 * failing linkage-name lookups per C function) was 85% of an index build,
 * and it cannot build two CUs of one Dwarf from two threads.
 */
#define _GNU_SOURCE
#include "dwarf_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- opening */

/* The alt file debug names, from the store, pinned for D's life (none
 * found: names in it stay unknown, and D->alt_missing says so). */
static void attach_alt(struct ds__dwarf *D, Elf *debug)
{
	const struct ds__dwarf_aux *A = NULL;
	struct ds_build_id bid = { 0 };
	const char *name;
	struct ds__aux *h;

	if (!ds__elf_altlink(debug, &name, &bid))
		return;
	h = D->src.alt ? D->src.alt(D->src.arg, &bid, name, D->name) : NULL;
	if (h && !(A = D->src.pin(D->src.arg, h)))
		D->src.put(D->src.arg, h);
	if (!A) {
		D->alt_missing = true;
		ds_warn(D->ctx, "%s: dwz alt file %s not found: names in it stay unknown", D->name,
			name);
		return;
	}
	D->alt_h = h;
	D->alt = &A->f;
}

int ds__dwarf_open(struct ds_context *ctx, Elf *debug, const char *name, const char *binary,
		   const struct ds__aux_src *src, struct ds__dwarf **out)
{
	struct ds__dwarf *D;
	struct abbrevs t = { .off = UINT64_MAX };
	int err;

	*out = NULL;
	if (!debug || !ds__dw_plausible(ctx, debug, name))
		return -ENODATA;
	D = calloc(1, sizeof(*D));
	if (!D)
		return -ENOMEM;
	D->ctx = ctx;
	if (src)
		D->src = *src;
	D->name = strdup(name ? name : "debuginfo");
	D->binary = binary ? strdup(binary) : NULL;
	err = D->name && (D->binary || !binary)
		  ? ds__dw_load_sections(ctx, D->name, &D->bytes, debug, &D->main, false, ALL_SECS)
		  : -ENOMEM;
	if (!err && !D->main.s[SEC_INFO].p)
		err = -ENODATA;
	if (!err)
		err = ds__dw_scan_units(ctx, D->name, &D->bytes, &D->main, &t);
	if (!err)
		err = ds__dw_scan_skeletons(D, &t);
	if (!err && D->nskels)
		err = ds__dw_attach_dwp(D);
	if (!err)
		attach_alt(D, debug);
	ds__dw_abbrevs_release(&t);
	if (!err)
		err = ds__dw_map_units(D);
	if (err) {
		ds__dwarf_close(D);
		return err;
	}
	*out = D;
	return 0;
}

void ds__dwarf_close(struct ds__dwarf *D)
{
	if (!D)
		return;
	for (size_t i = 0; i < D->nskels; i++) {
		struct ds__aux *h = atomic_load(&D->skels[i].dwo);

		if (h)
			D->src.put(D->src.arg, h);
	}
	if (D->dwp_h)
		D->src.put(D->src.arg, D->dwp_h);
	if (D->alt_h) {
		D->src.unpin(D->src.arg, D->alt_h);
		D->src.put(D->src.arg, D->alt_h);
	}
	ds__dw_dfile_release(&D->main);
	free(D->skels);
	free(D->code_units);
	free(D->ranges);
	free(D->binary);
	free(D->name);
	free(D);
}

bool ds__dwarf_partial(const struct ds__dwarf *D)
{
	return D && D->alt_missing;
}

size_t ds__dwarf_units(const struct ds__dwarf *D)
{
	return D ? D->ncode : 0;
}

int ds__dwarf_ranges(struct ds__dwarf *D, struct ds__cu_range **ranges, size_t *n)
{
	*ranges = malloc((D->nranges ? D->nranges : 1) * sizeof(**ranges));
	if (!*ranges)
		return -ENOMEM;
	if (D->nranges)
		memcpy(*ranges, D->ranges, D->nranges * sizeof(**ranges));
	*n = D->nranges;
	return 0;
}

uint64_t ds__dwarf_bytes(const struct ds__dwarf *D)
{
	return D ? D->bytes + sizeof(*D) : 0;
}

/* ------------------------------------------------------------- workers */

struct ds__dwarf_worker *ds__dwarf_worker_new(struct ds__dwarf *D)
{
	struct ds__dwarf_worker *W = calloc(1, sizeof(*W));

	if (!W)
		return NULL;
	W->D = D;
	W->cur.off = UINT64_MAX;
	for (int i = 0; i < ABBREV_CACHE; i++)
		W->other[i].off = UINT64_MAX;
	W->names = calloc(NAME_CACHE, sizeof(*W->names));
	if (!W->names) {
		free(W);
		return NULL;
	}
	return W;
}

void ds__dwarf_worker_free(struct ds__dwarf_worker *W)
{
	if (!W)
		return;
	ds__dw_abbrevs_release(&W->cur);
	for (int i = 0; i < ABBREV_CACHE; i++)
		ds__dw_abbrevs_release(&W->other[i]);
	free(W->names);
	free(W);
}

int ds__dwarf_build_unit(struct ds__dwarf_worker *W, size_t unit, struct sym_build *B)
{
	struct ds__dwarf *D = W->D;
	const struct dfile *f = &D->main;
	const struct unit *u;
	struct ctxu cu;
	struct build bd = { .W = W, .B = B, .cu = &cu };
	struct skel *sk;
	struct cursor c;
	uint64_t code;
	int err = 0;

	ds__sym_build_reset(B);
	if (unit >= D->ncode)
		return 0;
	u = &f->units[D->code_units[unit]];
	cu = (struct ctxu){ f, u, false, D->alt };
	if (W->cur.off != u->abbrev_off || W->cur.addr_size != u->addr_size ||
	    W->cur.off_size != u->off_size || W->cur.version != u->version) {
		err = ds__dw_abbrevs_read(f, u->abbrev_off, u, &W->cur);
		if (err) {
			W->cur.off = UINT64_MAX;
			return err;
		}
	}
	if (u->stmt_list != UINT64_MAX)
		err = ds__dw_read_line_program(&bd, u->stmt_list, u->comp_dir);
	if (!err && (sk = ds__dw_skel_of(D, D->code_units[unit]))) {
		err = ds__dw_split_walk(&bd, sk, u);
		free(bd.fileoff);
		return err;
	}
	c = (struct cursor){ f->s[SEC_INFO].p + u->die, f->s[SEC_INFO].p + u->end, false, f->be };
	code = uleb(&c);
	if (!err && code) {
		const struct abbrev *ab = abbrev_get(&W->cur, code);
		struct die top = { 0 };

		/* Over the top DIE, to its children. */
		if (ab && ab->children && ds__dw_read_die(&cu, &W->cur, ab, &c, &top))
			err = ds__dw_walk_unit(&bd, &W->cur, &c);
	}
	free(bd.fileoff);
	return err;
}
