/* SPDX-License-Identifier: MIT */
/*
 * The unit index of a split DWARF .dwp package (.debug_cu_index /
 * .debug_tu_index, version 2 of the GNU extension for DWARF 4, version 5
 * of DWARF 5), for the rest of dwarf_split.c (through dwarf_int.h) and
 * the fuzz harness of the index reader, which needs nothing else of the
 * DWARF reader.  Nothing here reads a DIE; where the files are is
 * lib/store/locate.c's (ds__dwo_candidates()).
 */
#ifndef DS_DWARF_SPLIT_H
#define DS_DWARF_SPLIT_H

#include "symbolize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sections an index's columns name.  Version 5's DW_SECT_* values
 * are these; version 2 (GNU) numbers them alike up to 6, then 7 for
 * .debug_macinfo.dwo and 8 for .debug_macro.dwo, and has .debug_types.dwo
 * as 2, reserved in version 5. */
#define DS_DWP_SECT_MAX 9
enum ds__dwp_sect {
	DS_DWP_NONE,
	DS_DWP_INFO,
	DS_DWP_TYPES,
	DS_DWP_ABBREV,
	DS_DWP_LINE,
	DS_DWP_LOC, /* v2: .debug_loc.dwo; v5: .debug_loclists.dwo */
	DS_DWP_STR_OFFSETS,
	DS_DWP_MACRO,
	DS_DWP_RNGLISTS, /* v5 only */
	DS_DWP_MACINFO, /* v2 only */
};

/* A parsed index: views into its section, checked to lie inside it. */
struct ds__dwp_index {
	unsigned version; /* 2 or 5 */
	uint32_t ncols, nunits, nslots;
	const unsigned char *hash; /* nslots signatures (8 bytes each) */
	const unsigned char *slot_rows; /* nslots row numbers (4 bytes; 0: empty) */
	const unsigned char *offsets, *sizes; /* nunits rows of ncols (4 bytes) */
	int col[DS_DWP_SECT_MAX + 1]; /* column of each section, -1: none */
	bool be;
};

/* One unit's contributions, [off, off + size) of each section (size 0:
 * none). */
struct ds__dwp_slice {
	uint64_t off, size;
};

/* Read the index at p (size bytes, big-endian if be).  0; -EBADMSG with
 * why when it is malformed: a version other than 2 or 5, a slot count
 * not a power of two, more units than slots, more columns than sections,
 * tables past the section's end, a row number past the units, a column twice or of an
 * unknown section, no .debug_info.dwo (or .debug_types.dwo) or
 * .debug_abbrev.dwo column. */
int ds__dwp_index_read(const unsigned char *p, size_t size, bool be, struct ds__dwp_index *ix,
		       char *why, size_t whylen);
/* The row (1-based) of signature sig, 0 when none.  At most nslots probes. */
uint32_t ds__dwp_index_find(const struct ds__dwp_index *ix, uint64_t sig);
/* Row row's contributions into out[DS_DWP_*].  secsize[DS_DWP_*] is the
 * size of each section the caller will read (0: absent); a contribution
 * to one of them past its end refuses the whole row (false).  Sections
 * the caller does not read are given as UINT64_MAX and not checked. */
bool ds__dwp_index_row(const struct ds__dwp_index *ix, uint32_t row,
		       const uint64_t secsize[DS_DWP_SECT_MAX + 1],
		       struct ds__dwp_slice out[DS_DWP_SECT_MAX + 1]);
/* The signature of slot i (< nslots) and its row (0: empty slot). */
uint32_t ds__dwp_index_slot(const struct ds__dwp_index *ix, uint32_t i, uint64_t *sig);

#endif
