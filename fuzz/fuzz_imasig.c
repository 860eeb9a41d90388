/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for what a debuginfod server says about a file's IMA
 * signature (lib/debuginfod/ima.c): the input is a block of response
 * headers as the fetcher keeps them ("Name: value" lines), the server's
 * to choose.  The X-DEBUGINFOD-IMASIGNATURE value is looked up and parsed
 * as an IMA digital signature v2; what the parser accepts must keep its
 * contract (a known digest, a signature that fits, and the hex it came
 * from, re-encoded, is the value); verification without keys must refuse
 * whatever the block says, without reading the file.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "ima.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static unsigned long blocks, found, parsed;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_imasig: %lu header blocks, %lu signatures, %lu parsed\n", blocks,
		found, parsed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A C string, as the fetcher's block is: up to the first NUL. */
	char *text = malloc(size + 1), why[160];
	struct ds_ima_sig sig;
	const char *v, *bad = NULL;
	size_t len;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	blocks++;
	v = ds__xhdr_value(text, "X-DEBUGINFOD-IMASIGNATURE", &len);
	if (v) {
		found++;
		if (v < text || v + len > text + size)
			abort();
		if (!ds__ima_sig_parse(v, len, &sig, &bad)) {
			char hex[3];

			parsed++;
			if (!sig.md || sig.len > DS_IMA_SIG_MAX || len != 2 * (9 + sig.len))
				abort();
			/* the signature bytes are the value's last hex digits */
			for (size_t i = 0; i < sig.len; i++) {
				snprintf(hex, sizeof(hex), "%02x", sig.sig[i]);
				if (strncasecmp(hex, v + 18 + 2 * i, 2))
					abort();
			}
		} else if (!bad) {
			abort(); /* a refusal says why */
		}
	}
	/* No keys: refused, whatever the block, and the file is not read. */
	if (ds__ima_verify(NULL, text, -1, 0, why, sizeof(why)) != -EKEYREJECTED || !why[0])
		abort();
	free(text);
	return 0;
}
