/* SPDX-License-Identifier: MIT */
/*
 * The DWARF reader's sections (see dwarf_int.h): those of one file found
 * by name (.debug_* or .zdebug_*, .dwo ones in split DWARF's files), the
 * compressed ones inflated (zlib, zstd; several at once on several
 * threads), and the check that a file's compressed sections claim sizes
 * worth reading at all.
 */
#define _GNU_SOURCE
#include "dwarf_int.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

static const char *const sec_names[NSEC] = {
	"info", "abbrev", "str", "line_str", "str_offsets", "addr", "ranges", "rnglists", "line",
	"aranges", "cu_index",
};

struct inflate_job {
	const unsigned char *src;
	size_t src_size, size;
	unsigned type; /* ELFCOMPRESS_* */
	void *out;
	int err;
};

/* A zlib stream into exactly size bytes at out: 0 or -EBADMSG.  Raw
 * inflate after the 2-byte header, its Adler-32 trailer not checked: the
 * DWARF reader is bounded against any bytes, so the sum guards nothing it
 * needs, and computing it was 14% of the instructions of one address of
 * libc6-dbg's zlib-compressed DWARF. */
static int inflate_zlib(const unsigned char *src, size_t src_size, unsigned char *out,
			size_t size)
{
	z_stream z = { 0 };
	int rc;

	/* CMF/FLG: deflate (CM 8), a window of at most 32 KiB, no preset
	 * dictionary, and the check bits. */
	if (src_size < 2 || (src[0] & 0x0f) != 8 || (src[0] >> 4) > 7 || (src[1] & 0x20) ||
	    ((unsigned)src[0] << 8 | src[1]) % 31)
		return -EBADMSG;
	if (src_size - 2 > UINT_MAX || size > UINT_MAX || inflateInit2(&z, -15) != Z_OK)
		return -EBADMSG;
	z.next_in = (unsigned char *)src + 2;
	z.avail_in = (uInt)(src_size - 2);
	z.next_out = out;
	z.avail_out = (uInt)size;
	rc = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	return rc == Z_STREAM_END && z.total_out == size ? 0 : -EBADMSG;
}

static void *inflate_one(void *arg)
{
	struct inflate_job *j = arg;

	j->out = malloc(j->size ? j->size : 1);
	if (!j->out) {
		j->err = -ENOMEM;
		return NULL;
	}
	if (j->type == ELFCOMPRESS_ZLIB) {
		j->err = inflate_zlib(j->src, j->src_size, j->out, j->size);
	} else if (j->type == ELFCOMPRESS_ZSTD) {
		size_t n = ZSTD_decompress(j->out, j->size, j->src, j->src_size);

		j->err = !ZSTD_isError(n) && n == j->size ? 0 : -EBADMSG;
	} else {
		j->err = -ENOTSUP;
	}
	if (j->err) {
		free(j->out);
		j->out = NULL;
	}
	return NULL;
}

/* The section of name; dwo: of a .dwo file or .dwp package, whose names
 * end in .dwo (but for the package's index). */
static int sec_index(const char *name, bool *zdebug, bool dwo)
{
	size_t n;

	*zdebug = false;
	if (!strncmp(name, ".zdebug_", 8)) {
		*zdebug = true;
		name += 8;
	} else if (!strncmp(name, ".debug_", 7)) {
		name += 7;
	} else {
		return -1;
	}
	n = strlen(name);
	if (dwo && n > 4 && !strcmp(name + n - 4, ".dwo"))
		n -= 4;
	else if (dwo != !strcmp(name, "cu_index"))
		return -1;
	for (int i = 0; i < NSEC; i++)
		if (strlen(sec_names[i]) == n && !strncmp(name, sec_names[i], n))
			return i;
	return -1;
}

/* The sections f needs of those in want (bits 1 << SEC_*; dwo: of a .dwo
 * or .dwp) that it does not have yet, decompressed on up to one thread
 * each, their bytes added to *bytes; name is for messages. */
int ds__dw_load_sections(struct ds_context *ctx, const char *fname, uint64_t *bytes, Elf *elf,
			 struct dfile *f, bool dwo, unsigned want)
{
	struct inflate_job jobs[NSEC];
	int which[NSEC], njobs = 0, err = 0;
	pthread_t tid[NSEC];
	bool started[NSEC] = { false };
	size_t shstrndx, total = 0;
	Elf_Scn *scn = NULL;

	f->be = elf_getident(elf, NULL)[EI_DATA] == ELFDATA2MSB;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENODATA;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		bool zdebug;
		int i;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    (i = sec_index(name, &zdebug, dwo)) < 0 || f->s[i].p || !(want & (1u << i)))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) || zdebug) {
			struct ds_elf_packed pk;

			/* (ds__dwarf_open() checked every claim; again here, so
			 * that no caller can skip it.) */
			if (njobs < NSEC && ds__elf_packed(elf, scn, name, &pk) &&
			    ds__elf_inflate_plausible(pk.packed, pk.size)) {
				jobs[njobs] = (struct inflate_job){ .src = pk.src,
								    .src_size = pk.src_size,
								    .size = pk.size,
								    .type = pk.type };
				which[njobs] = i;
				total += pk.size;
				njobs++;
			}
			continue;
		}
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf) {
			f->s[i].p = d->d_buf;
			f->s[i].size = d->d_size;
		}
	}
	/* One thread per section when there is enough to inflate. */
	for (int k = 0; k < njobs; k++) {
		if (k > 0 && total > (1u << 20) &&
		    pthread_create(&tid[k], NULL, inflate_one, &jobs[k]) == 0)
			started[k] = true;
	}
	if (njobs)
		inflate_one(&jobs[0]);
	for (int k = 0; k < njobs; k++) {
		if (k > 0 && !started[k])
			inflate_one(&jobs[k]);
		else if (started[k])
			pthread_join(tid[k], NULL);
	}
	for (int k = 0; k < njobs; k++) {
		int i = which[k];

		if (jobs[k].err) {
			ds_warn(ctx, "%s: .debug_%s: %s; it is not read", fname, sec_names[i],
				jobs[k].err == -ENOMEM	   ? "no memory to decompress it"
				: jobs[k].err == -ENOTSUP ? "unknown compression"
							  : "does not decompress");
			if (jobs[k].err == -ENOMEM)
				err = -ENOMEM;
			continue;
		}
		f->owned[i] = jobs[k].out;
		f->s[i].p = jobs[k].out;
		f->s[i].size = jobs[k].size;
		*bytes += jobs[k].size;
	}
	for (int i = 0; i < NSEC; i++)
		f->s[i].nul_end = f->s[i].size && !f->s[i].p[f->s[i].size - 1];
	return err;
}

void ds__dw_dfile_release(struct dfile *f)
{
	for (int i = 0; i < NSEC; i++)
		free(f->owned[i]);
	free(f->units);
	memset(f, 0, sizeof(*f));
}

/* dwarf's sections decompress into buffers of the size their headers
 * claim: refuse the whole DWARF of a file where one claim is out of
 * proportion (its ELF symbols still answer). */
bool ds__dw_plausible(struct ds_context *ctx, Elf *elf, const char *name)
{
	char msg[256];

	if (ds__elf_check_compressed(elf, msg, sizeof(msg)) == 0)
		return true;
	ds_warn(ctx, "%s: %s; its DWARF is not read", name, msg);
	return false;
}
