/* SPDX-License-Identifier: MIT */
/* For the harnesses whose input must be a file (fuzz_symelf.c,
 * fuzz_dirindex.c): a private directory and the input written into it. */
#ifndef DS_FUZZFILE_H
#define DS_FUZZFILE_H

#include <stddef.h>
#include <stdint.h>

/* A new directory $TMPDIR/fuzz_NAME.XXXXXX (/tmp without TMPDIR) into
 * dir (len bytes): 0, or -1 with dir emptied. */
int fuzz_private_dir(const char *name, char *dir, size_t len);
/* data as the whole file at path (created 0600 or truncated): 0 or -1. */
int fuzz_write_file(const char *path, const uint8_t *data, size_t size);

#endif
