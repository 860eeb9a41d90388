/* SPDX-License-Identifier: MIT */
/*
 * Split DWARF's files (see dwarf_split.h): the unit index of a .dwp
 * package.  dwarf.c reads the units themselves; where a .dwo or .dwp is
 * looked for is the locate room's (lib/locate.c).
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
#include "dwarf_split.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
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
