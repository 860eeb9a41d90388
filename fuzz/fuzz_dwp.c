/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the .dwp unit index reader (lib/symbolize/dwarf_split.c).
 *
 * The input: one byte of flags (bit 0: big-endian), then nine 4-byte
 * sizes (little-endian) of the sections DS_DWP_INFO..DS_DWP_MACINFO a
 * caller would read (0xffffffff: one it does not read), then the bytes of
 * a .debug_cu_index or .debug_tu_index, copied into a buffer of exactly
 * their size.  When the index is accepted, it must lie inside those bytes
 * (header, hash and row tables, offsets and sizes), name no row past its
 * units and no column twice; every slot's row, every lookup (of every
 * slot's signature and of others) must be a row or none, after at most a
 * table's worth of probes; every row the reader gives out must lie inside
 * the sections as sized, and rows 0 and units + 1 must be refused.  A
 * refusal must be -EBADMSG with a reason.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "dwarf_split.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

#define HEAD (1 + 4 * DS_DWP_SECT_MAX)

static unsigned long accepted, refused, rows_ok, rows_refused;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_dwp: %lu indexes accepted, %lu refused; %lu rows given, %lu refused\n",
		accepted, refused, rows_ok, rows_refused);
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz_dwp: %s\n", what);
	abort();
}

static bool inside(const unsigned char *p, size_t n, const unsigned char *lo, size_t len)
{
	return p >= lo && p <= lo + len && n <= (size_t)(lo + len - p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t secsize[DS_DWP_SECT_MAX + 1] = { 0 };
	struct ds__dwp_slice sl[DS_DWP_SECT_MAX + 1];
	struct ds__dwp_index ix;
	unsigned char *buf;
	size_t len;
	char why[160] = "";
	bool be;
	int err;

	if (size < HEAD)
		return 0;
	be = data[0] & 1;
	for (int s = 1; s <= DS_DWP_SECT_MAX; s++) {
		const uint8_t *q = data + 1 + 4 * (s - 1);
		uint32_t v = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
			     (uint32_t)q[3] << 24;

		secsize[s] = v == UINT32_MAX ? UINT64_MAX : v;
	}
	len = size - HEAD;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + HEAD, len);
	err = ds__dwp_index_read(buf, len, be, &ix, why, sizeof(why));
	if (err) {
		if (err != -EBADMSG || !why[0])
			die("a refusal that is not -EBADMSG with a reason");
		refused++;
		free(buf);
		return 0;
	}
	accepted++;
	if (ix.version != 2 && ix.version != 5)
		die("a version other than 2 or 5");
	if (ix.ncols > DS_DWP_SECT_MAX || ix.nunits > ix.nslots ||
	    (ix.nslots & (ix.nslots - 1)))
		die("counts out of range");
	if (!inside(ix.hash, (size_t)ix.nslots * 8, buf, len) ||
	    !inside(ix.slot_rows, (size_t)ix.nslots * 4, buf, len) ||
	    !inside(ix.offsets, (size_t)ix.nunits * ix.ncols * 4, buf, len) ||
	    !inside(ix.sizes, (size_t)ix.nunits * ix.ncols * 4, buf, len))
		die("a table outside the section");
	for (int a = 0; a <= DS_DWP_SECT_MAX; a++)
		for (int b = a + 1; b <= DS_DWP_SECT_MAX; b++)
			if (ix.col[a] >= 0 && ix.col[a] == ix.col[b])
				die("two sections in one column");
	for (uint32_t i = 0; i < ix.nslots; i++) {
		uint64_t sig;
		uint32_t row = ds__dwp_index_slot(&ix, i, &sig);

		if (row > ix.nunits || ds__dwp_index_find(&ix, sig) > ix.nunits ||
		    ds__dwp_index_find(&ix, sig ^ 0x9e3779b97f4a7c15ull) > ix.nunits)
			die("a row past the units");
	}
	if (ds__dwp_index_row(&ix, 0, secsize, sl) ||
	    ds__dwp_index_row(&ix, ix.nunits + 1, secsize, sl))
		die("row 0 or a row past the units given out");
	for (uint32_t r = 1; r <= ix.nunits; r++) {
		if (!ds__dwp_index_row(&ix, r, secsize, sl)) {
			rows_refused++;
			continue;
		}
		rows_ok++;
		for (int s = 1; s <= DS_DWP_SECT_MAX; s++)
			if (secsize[s] != UINT64_MAX &&
			    (sl[s].off > secsize[s] || sl[s].size > secsize[s] - sl[s].off))
				die("a contribution past its section's end");
	}
	free(buf);
	return 0;
}
