/* SPDX-License-Identifier: MIT */
/*
 * Writes mkgotab.h's hand-built Go tables as fuzz_gopclntab inputs (the
 * 24-byte prefix of fuzz/fuzz_gopclntab.c, then the image), one file per
 * layout, into DIR:   mkgotab DIR
 */
#include "mkgotab.h"

#include <stdio.h>

static void le(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

int main(int argc, char **argv)
{
	unsigned char img[24 + MKGO_MAX];

	if (argc != 2) {
		fprintf(stderr, "usage: mkgotab DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(mkgo_variants) / sizeof(mkgo_variants[0]); i++) {
		size_t tab_off, n;
		uint64_t gofunc;
		char path[4096];
		FILE *f;
		bool ok;

		n = mkgo_write(&mkgo_variants[i], img + 24, &tab_off, &gofunc);
		if (!n)
			return 1;
		memset(img, 0, 24);
		le(img, MKGO_VADDR, 8);
		le(img + 8, gofunc, 8);
		le(img + 16, tab_off, 4);
		/* Each layout whole, and (1.18 on) with its inline trees
		 * apart, as in Go's PIE link. */
		for (int split = 0; split < (mkgo_variants[i].ver >= 118 ? 2 : 1); split++) {
			le(img + 20, split ? tab_off : 0, 4);
			snprintf(path, sizeof(path), "%s/%s%s", argv[1], mkgo_variants[i].name,
				 split ? "-split" : "");
			f = fopen(path, "wb");
			ok = f && fwrite(img, 1, 24 + n, f) == 24 + n;
			if (f && fclose(f))
				ok = false;
			if (!ok) {
				perror(path);
				return 1;
			}
		}
	}
	return 0;
}
