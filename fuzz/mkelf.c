/* SPDX-License-Identifier: MIT */
/*
 * mkelf DIR: writes the hand-built ELF variants of mkelf.h into DIR (for
 * the fuzz corpus) and prints "<expected build ID or -> <file>" per file.
 * The corpus is generated rather than committed: no ELF file is tracked.
 */
#include "mkelf.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
	static uint8_t buf[MKELF_MAX_LEN];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < MKELF_NVARIANTS; i++) {
		const struct mkelf_variant *v = &mkelf_variants[i];
		struct mkelf_layout lay;
		char path[4096], hex[2 * 256 + 1];
		size_t len = mkelf_build(v, buf, &lay);
		FILE *f;

		snprintf(path, sizeof(path), "%s/hand-%s.elf", argv[1], v->name);
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
			perror(path);
			return 1;
		}
		mkelf_expected_hex(v, hex, sizeof(hex));
		printf("%s %s\n", hex[0] ? hex : "-", path);
	}
	return 0;
}
