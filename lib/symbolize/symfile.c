/* SPDX-License-Identifier: MIT */
/*
 * Saved symbol indexes: a complete index, as the position-independent
 * parts symindex.c gives (lib/symbolize/symindex.h), written to one file per build
 * ID and mapped read-only by the next process.
 *
 * The file.  Numbers are in the writer's byte order and word size, which
 * the header says (a file of another machine is stale, not damaged);
 * offsets count from the start of the file and are multiples of 8, so a
 * mapping (page aligned) gives every part its natural alignment:
 *
 *   header     168 bytes, struct header below
 *   CU table   ncus x struct cu_entry {u64 offset, u64 size, u32 sum, u32 0}
 *   ranges     nranges x struct ds__cu_range {u64 lo, u64 hi, u32 cu, u32 0},
 *              sorted by lo, none empty, each cu < ncus
 *   ELF blob   elf_size bytes, zeros to a multiple of 8
 *   CU blobs   in CU order, each followed by zeros to a multiple of 8, then
 *              by its chunks' sums (u32 each, ds__chunks_of(size) of
 *              them; zeros to a multiple of 8); a CU of size 0 has offset
 *              0 and sum 0 and no sums (so has an empty ELF blob)
 *
 * Every part has one place: each starts where the one before it ends,
 * rounded up to 8, and the file ends where the last one does.  The loader
 * accepts that layout only, so the bytes of a file depend on the parts
 * alone, and two builds of one debuginfo write identical files.  The
 * header's crc (zlib's CRC-32) covers the header, with crc 0, and both
 * tables; each blob has its own sum (ds__chunked_sum(): XXH3, faster on
 * the megabytes a blob can hold, of the XXH3 sums of its 64 KiB chunks).
 * A CU's sum covers the array of its chunks' sums that follows it, so
 * symindex.c checks that array and the blob's head when a lookup first
 * needs the CU, and each chunk as a lookup first reads it: mapping a file
 * costs one pass over its tables, one address a few chunks of one CU
 * (not the 70 MB of the CU that holds main() in a big C++ program).  The
 * ELF blob's sum is the same kind; it is checked whole when mapped.
 *
 * The key (struct ds__symfile_key, in the header): the build ID, plus the
 * size and a CRC-32 of the ELF header, program and section header tables
 * of the debuginfo, and of the binary when it is another file (segments
 * come from it, and symbols when the debuginfo has none).  A build ID can
 * have several debuginfo files that give different indexes (the
 * unstripped binary, its --only-keep-debug copy, a dwz'd or compressed
 * one) and binaries stripped in different ways: their section tables
 * differ.  Nothing of the file system goes in (times, inodes, paths), so
 * identical inputs give identical files anywhere.  A file whose key is not
 * the inputs' is stale: ignored, and replaced by the next save.  A dwz alt
 * file is an input too, found by its build ID (by the store): an index
 * built without it (not found) is not saved, so that none is kept.
 *
 * Written to a temporary file in the same directory and renamed into
 * place: a reader maps the old file or the new one, never half of one.
 * Not fsync()ed: after a crash the worst is a damaged file, which the
 * loader refuses, and the index is rebuilt.  A file is never rewritten in
 * place (a truncated mapping would fault); the directories and the file
 * are trusted as the cache's directories are (ours or root's, writable by
 * nobody else: checked on the opened file), and neither is reached
 * through a symlink.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC "DSOSYMIX"
/* 2: blob sums are XXH3, not CRC-32; 3: chunked, each CU's chunks' sums
 * after it */
#define FORMAT_VERSION 3
#define ORDER_MARK 0x01020304u
#define ENTRY_NAME "dsostore-index" /* in a debuginfod cache entry */
#define FILE_MAX ((uint64_t)1 << 36) /* 64 GiB: no index is larger */
#define KEY_BYTES_MAX (4u << 20) /* header table bytes a key reads */

struct header {
	char magic[8];
	uint32_t version; /* FORMAT_VERSION */
	uint32_t order; /* ORDER_MARK, as the writer's byte order has it */
	uint8_t word; /* sizeof(void *) of the writer */
	uint8_t build_id_size;
	uint16_t header_size; /* sizeof(struct header) */
	uint32_t blob_version; /* DS__SYMFILE_BLOB_VERSION */
	uint64_t file_size;
	uint64_t debug_size, binary_size;
	uint32_t debug_crc, binary_crc;
	uint32_t ncus, nranges;
	uint64_t cus_off, ranges_off;
	uint64_t elf_off, elf_size;
	uint32_t elf_sum;
	uint32_t crc; /* of the header with crc 0, the CU table, the ranges */
	uint8_t build_id[DS_BUILD_ID_MAX]; /* zeros after build_id_size */
};

struct cu_entry {
	uint64_t off, size;
	uint32_t sum, pad;
};

_Static_assert(sizeof(struct header) == 104 + DS_BUILD_ID_MAX, "no implicit padding");
_Static_assert(offsetof(struct header, build_id) == 104, "no implicit padding");
_Static_assert(sizeof(struct header) % 8 == 0, "tables stay aligned");
_Static_assert(sizeof(struct cu_entry) == 24, "no implicit padding");
_Static_assert(sizeof(struct ds__cu_range) == 24, "no implicit padding");

static uint64_t align8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

/* The next part of size bytes goes at *pos (size 0: nowhere, offset 0);
 * false when the file would outgrow FILE_MAX. */
static bool place(uint64_t *pos, uint64_t size, uint64_t *off)
{
	*off = 0;
	if (!size)
		return true;
	if (size > FILE_MAX - *pos)
		return false;
	*off = *pos;
	*pos = align8(*pos + size);
	return true;
}

static uint32_t crc_of(uint32_t crc, const void *p, uint64_t len)
{
	const unsigned char *b = p;

	while (len) {
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;

		crc = (uint32_t)crc32(crc, b, n);
		b += n;
		len -= n;
	}
	return crc;
}

static uint32_t tables_crc(const struct header *h, const void *cus, const void *ranges)
{
	struct header z = *h;
	uint32_t crc;

	z.crc = 0;
	crc = crc_of(0, &z, sizeof(z));
	crc = crc_of(crc, cus, (uint64_t)h->ncus * sizeof(struct cu_entry));
	return crc_of(crc, ranges, (uint64_t)h->nranges * sizeof(struct ds__cu_range));
}

/* The ranges as the loader takes them: sorted by lo, lo < hi, a CU that
 * exists, padding 0.  NULL, or what is wrong. */
static const char *ranges_bad(const struct ds__cu_range *r, uint64_t n, uint64_t ncus,
			      uint64_t *at)
{
	for (uint64_t i = 0; i < n; i++) {
		*at = i;
		if (r[i].lo >= r[i].hi)
			return "is empty or ends before it starts";
		if (i && r[i].lo < r[i - 1].lo)
			return "out of order";
		if (r[i].cu >= ncus)
			return "names no CU";
		if (r[i].pad)
			return "has padding that is not zero";
	}
	return NULL;
}

/* ------------------------------------------------------------- the key */

/* CRC of len bytes of fd at off, up to *budget of them (what lies past
 * the end of the file counts as nothing). */
static uint32_t crc_file_range(int fd, uint64_t off, uint64_t len, uint32_t crc,
			       uint64_t *budget)
{
	unsigned char buf[16384];

	if (len > *budget)
		len = *budget;
	*budget -= len;
	while (len) {
		ssize_t n = pread(fd, buf, len < sizeof(buf) ? len : sizeof(buf), (off_t)off);

		if (n <= 0)
			break;
		crc = crc_of(crc, buf, (uint64_t)n);
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return crc;
}

static int file_key(int fd, Elf *elf, uint64_t *size, uint32_t *crc)
{
	uint64_t budget = KEY_BYTES_MAX;
	size_t phnum = 0, shnum = 0;
	struct stat st;
	GElf_Ehdr eh;
	uint32_t c;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &phnum) != 0)
		phnum = 0;
	if (elf_getshdrnum(elf, &shnum) != 0)
		shnum = 0;
	c = crc_file_range(fd, 0, gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Ehdr)
								     : sizeof(Elf64_Ehdr),
			   0, &budget);
	c = crc_file_range(fd, eh.e_phoff, (uint64_t)phnum * eh.e_phentsize, c, &budget);
	c = crc_file_range(fd, eh.e_shoff, (uint64_t)shnum * eh.e_shentsize, c, &budget);
	*size = (uint64_t)st.st_size;
	*crc = c;
	return 0;
}

int ds__symfile_key(struct ds__symfile_key *k, const struct ds_build_id *bid, int debug_fd,
		    Elf *debug, int binary_fd, Elf *binary)
{
	int err;

	memset(k, 0, sizeof(*k));
	k->bid = *bid;
	err = file_key(debug_fd, debug, &k->debug_size, &k->debug_crc);
	if (!err && binary && binary_fd >= 0)
		err = file_key(binary_fd, binary, &k->binary_size, &k->binary_crc);
	return err;
}

/* -------------------------------------------------------- the container */

struct out {
	int fd, err;
	size_t n;
	unsigned char buf[1 << 16];
};

static void out_flush(struct out *o)
{
	if (!o->err)
		o->err = ds__write_all(o->fd, o->buf, o->n);
	o->n = 0;
}

/* p NULL: zeros. */
static void out_put(struct out *o, const void *p, uint64_t len)
{
	const unsigned char *b = p;

	while (len && !o->err) {
		size_t n = sizeof(o->buf) - o->n;

		if (n > len)
			n = (size_t)len;
		if (b)
			memcpy(o->buf + o->n, b, n);
		else
			memset(o->buf + o->n, 0, n);
		o->n += n;
		len -= n;
		if (b)
			b += n;
		if (o->n == sizeof(o->buf))
			out_flush(o);
	}
}

/* Zeros up to the next multiple of 8 after a part of len bytes. */
static void out_pad(struct out *o, uint64_t len)
{
	out_put(o, NULL, align8(len) - len);
}

/* The header of parts for key, but for where its CU blobs go (their
 * table, file_size, crc: write_parts() fills those in as they are
 * written); -EINVAL for parts the loader would refuse.  *pos: where the
 * first CU blob goes. */
static int layout(const struct ds__symfile_key *key, const struct ds__symbols_parts *parts,
		  struct header *h, uint64_t *pos)
{
	uint64_t at;

	memset(h, 0, sizeof(*h));
	if (parts->ncus > UINT32_MAX || parts->nranges > UINT32_MAX ||
	    key->bid.size > DS_BUILD_ID_MAX || (parts->nranges && !parts->ranges) ||
	    ranges_bad(parts->ranges, parts->nranges, parts->ncus, &at) ||
	    (parts->elf.size && !parts->elf.data) || (!parts->elf.size && parts->elf.sum))
		return -EINVAL;
	memcpy(h->magic, MAGIC, sizeof(h->magic));
	h->version = FORMAT_VERSION;
	h->order = ORDER_MARK;
	h->word = sizeof(void *);
	h->build_id_size = key->bid.size;
	h->header_size = sizeof(*h);
	h->blob_version = DS__SYMFILE_BLOB_VERSION;
	h->debug_size = key->debug_size;
	h->binary_size = key->binary_size;
	h->debug_crc = key->debug_crc;
	h->binary_crc = key->binary_crc;
	h->ncus = (uint32_t)parts->ncus;
	h->nranges = (uint32_t)parts->nranges;
	memcpy(h->build_id, key->bid.data, key->bid.size);
	h->cus_off = sizeof(*h);
	h->ranges_off = h->cus_off + parts->ncus * sizeof(struct cu_entry);
	*pos = align8(h->ranges_off + parts->nranges * sizeof(struct ds__cu_range));
	if (*pos > FILE_MAX || !place(pos, parts->elf.size, &h->elf_off))
		return -EINVAL;
	h->elf_size = parts->elf.size;
	h->elf_sum = parts->elf.sum;
	return 0;
}

/* A blob's chunk sums as its bytes are written (chunker_end(): their
 * ds__chunked_sum()). */
struct chunker {
	uint32_t *sums;
	size_t n;
	uint64_t in_chunk; /* bytes of the current chunk so far */
	struct ds__sum *st;
	int err;
};

static int chunker_start(struct chunker *c, uint64_t size)
{
	uint64_t n = ds__chunks_of(size);

	memset(c, 0, sizeof(*c));
	if (n && !(c->sums = calloc((size_t)n, sizeof(*c->sums))))
		return -ENOMEM;
	return 0;
}

static void chunker_add(struct chunker *c, const void *p, uint64_t len)
{
	const unsigned char *b = p;

	while (len && !c->err) {
		uint64_t take = DS__SUM_CHUNK - c->in_chunk;

		if (take > len)
			take = len;
		if (!c->st && !(c->st = ds__sum_new())) {
			c->err = -ENOMEM;
			return;
		}
		ds__sum_add(c->st, b, take);
		b += take;
		len -= take;
		c->in_chunk += take;
		if (c->in_chunk == DS__SUM_CHUNK) {
			c->sums[c->n++] = ds__sum_end(c->st);
			c->st = NULL;
			c->in_chunk = 0;
		}
	}
}

/* 0 and *sum, or -ENOMEM; frees what c took but sums. */
static int chunker_end(struct chunker *c, uint32_t *sum)
{
	if (c->st) {
		uint32_t last = ds__sum_end(c->st);

		if (!c->err)
			c->sums[c->n++] = last;
		c->st = NULL;
	}
	*sum = c->n ? ds__blob_sum(c->sums, c->n * sizeof(*c->sums)) : 0;
	return c->err;
}

/* Write len bytes of p at off, whole. */
static int pwrite_all(int fd, const void *p, size_t len, uint64_t off)
{
	const unsigned char *b = p;

	while (len) {
		ssize_t w = pwrite(fd, b, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* A CU's blob to write: the segments it is in (up to DS__BLOB_SEGS,
 * pointing at *hdr or at memory that stays while the file is written),
 * its size, and its sum (*have_sum false: summed here as written). */
typedef int (*cu_fn)(void *arg, size_t i, struct ds__cu_hdr_buf *hdr,
		     struct ds__seg segs[DS__BLOB_SEGS], size_t *nsegs, uint64_t *size,
		     uint32_t *sum, bool *have_sum);

/* The file of parts for key, its CU blobs asked of get() one at a time
 * and written from where they are (no copy of a CU's arrays is made:
 * saving adds no memory of its own): the blobs are written first, after
 * room for the header and tables, which go in last, when every blob's
 * place and sum is known.  (The file is a temporary one until renamed:
 * its order of writing is nobody's business.) */
static int write_parts(int fd, const struct ds__symfile_key *key,
		       const struct ds__symbols_parts *parts, cu_fn get, void *arg)
{
	struct cu_entry *cus = calloc(parts->ncus ? parts->ncus : 1, sizeof(*cus));
	struct out *o = malloc(sizeof(*o));
	struct header h;
	uint64_t pos, blobs;
	int err;

	if (!cus || !o) {
		err = -ENOMEM;
		goto out;
	}
	err = layout(key, parts, &h, &pos);
	if (err)
		goto out;
	o->fd = fd;
	o->err = 0;
	o->n = 0;
	/* The ELF blob, then the CUs', after the tables. */
	blobs = align8(h.ranges_off + parts->nranges * sizeof(struct ds__cu_range));
	if (lseek(fd, (off_t)blobs, SEEK_SET) < 0) {
		err = -errno;
		goto out;
	}
	out_put(o, parts->elf.data, parts->elf.size);
	out_pad(o, parts->elf.size);
	for (size_t i = 0; i < parts->ncus && !o->err; i++) {
		struct ds__seg segs[DS__BLOB_SEGS];
		struct ds__cu_hdr_buf hdr;
		struct chunker ck = { 0 };
		size_t nsegs = 0;
		uint64_t size = 0, total = 0, sums_off;
		uint32_t sum = 0;
		bool have_sum = true;

		err = get(arg, i, &hdr, segs, &nsegs, &size, &sum, &have_sum);
		if (!err && (nsegs > DS__BLOB_SEGS || (!size && (sum || nsegs)) ||
			     !place(&pos, size, &cus[i].off) ||
			     !place(&pos, ds__chunks_of(size) * sizeof(uint32_t), &sums_off)))
			err = -EINVAL;
		if (!err)
			err = chunker_start(&ck, size);
		for (size_t k = 0; !err && k < nsegs; k++) {
			if (!segs[k].p || segs[k].len > size - total) {
				err = -EINVAL;
				break;
			}
			out_put(o, segs[k].p, segs[k].len);
			chunker_add(&ck, segs[k].p, segs[k].len);
			total += segs[k].len;
		}
		if (!err && total != size)
			err = -EINVAL;
		if (!err) {
			uint32_t got = 0;

			err = chunker_end(&ck, &got);
			/* A saved CU's bytes written again: its sum was its
			 * file's, and every chunk was checked before the save
			 * (ds__symbols_parts_head()); what differs now is not
			 * written. */
			if (!err && have_sum && got != sum)
				err = -EIO;
			sum = got;
		}
		if (err) {
			uint32_t ignored;

			chunker_end(&ck, &ignored);
			free(ck.sums);
			goto out;
		}
		out_pad(o, size);
		out_put(o, ck.sums, ck.n * sizeof(uint32_t));
		out_pad(o, ck.n * sizeof(uint32_t));
		free(ck.sums);
		cus[i].size = size;
		cus[i].sum = sum;
	}
	out_flush(o);
	err = o->err;
	if (err)
		goto out;
	h.file_size = pos;
	h.crc = tables_crc(&h, cus, parts->ranges);
	err = pwrite_all(fd, &h, sizeof(h), 0);
	if (!err)
		err = pwrite_all(fd, cus, parts->ncus * sizeof(*cus), h.cus_off);
	if (!err)
		err = pwrite_all(fd, parts->ranges, parts->nranges * sizeof(*parts->ranges),
				 h.ranges_off);
out:
	free(o);
	free(cus);
	return err;
}

/* Parts whose CU blobs are given whole, with their sums. */
static int parts_cu(void *arg, size_t i, struct ds__cu_hdr_buf *hdr,
		    struct ds__seg segs[DS__BLOB_SEGS], size_t *nsegs, uint64_t *size,
		    uint32_t *sum, bool *have_sum)
{
	const struct ds__symbols_parts *parts = arg;
	const struct ds__blob *b = parts->cus ? &parts->cus[i] : NULL;

	(void)hdr;
	if (!b || (b->size && !b->data))
		return -EINVAL;
	segs[0] = (struct ds__seg){ b->data, b->size };
	*nsegs = b->size ? 1 : 0;
	*size = b->size;
	*sum = b->sum;
	*have_sum = true;
	return 0;
}

int ds__symfile_write(int fd, const struct ds__symfile_key *key,
		      const struct ds__symbols_parts *parts)
{
	return write_parts(fd, key, parts, parts_cu, (void *)parts);
}

#define BAD(code, ...)                                    \
	do {                                              \
		snprintf(why, whylen, __VA_ARGS__);       \
		return code;                              \
	} while (0)

/* The header alone: is this a file we can read, of these inputs? */
static int check_header(const struct header *h, size_t len, const struct ds__symfile_key *key,
			char *why, size_t whylen)
{
	uint64_t tables;

	if (memcmp(h->magic, MAGIC, sizeof(h->magic)) != 0)
		BAD(-EBADMSG, "not a saved index (no magic)");
	if (h->order != ORDER_MARK)
		BAD(h->order == __builtin_bswap32(ORDER_MARK) ? -ESTALE : -EBADMSG,
		    h->order == __builtin_bswap32(ORDER_MARK) ? "written in the other byte order"
							       : "no byte order mark");
	if (h->version != FORMAT_VERSION)
		BAD(-ESTALE, "format version %u, not %u", h->version, FORMAT_VERSION);
	if (h->word != sizeof(void *))
		BAD(-ESTALE, "written with %u-byte words, not %zu", h->word, sizeof(void *));
	if (h->blob_version != DS__SYMFILE_BLOB_VERSION)
		BAD(-ESTALE, "index version %u, not %u", h->blob_version, DS__SYMFILE_BLOB_VERSION);
	if (h->header_size != sizeof(*h))
		BAD(-EBADMSG, "a header of %u bytes, not %zu", h->header_size, sizeof(*h));
	if (h->file_size != len)
		BAD(-EBADMSG, "%zu bytes, its header says %llu", len,
		    (unsigned long long)h->file_size);
	tables = sizeof(*h) + ((uint64_t)h->ncus + h->nranges) * sizeof(struct cu_entry);
	if (h->cus_off != sizeof(*h) ||
	    h->ranges_off != h->cus_off + (uint64_t)h->ncus * sizeof(struct cu_entry) ||
	    tables > len)
		BAD(-EBADMSG, "tables of %u CUs and %u ranges that do not fit", h->ncus,
		    h->nranges);
	if (h->crc != tables_crc(h, (const char *)h + h->cus_off, (const char *)h + h->ranges_off))
		BAD(-EBADMSG, "checksum mismatch in its header or tables");
	/* Only now is a difference of inputs a difference, not damage. */
	if (h->build_id_size == 0 || h->build_id_size > DS_BUILD_ID_MAX)
		BAD(-EBADMSG, "a build ID of %u bytes", h->build_id_size);
	if (key && (h->build_id_size != key->bid.size ||
		    memcmp(h->build_id, key->bid.data, key->bid.size) != 0))
		BAD(-ESTALE, "of another build ID");
	if (key && (h->debug_size != key->debug_size || h->debug_crc != key->debug_crc))
		BAD(-ESTALE, "of another debuginfo file (%llu bytes, headers %08x; this one: "
			     "%llu, %08x)",
		    (unsigned long long)h->debug_size, h->debug_crc,
		    (unsigned long long)key->debug_size, key->debug_crc);
	if (key && (h->binary_size != key->binary_size || h->binary_crc != key->binary_crc))
		BAD(-ESTALE, "of another binary (%llu bytes, headers %08x; this one: %llu, %08x)",
		    (unsigned long long)h->binary_size, h->binary_crc,
		    (unsigned long long)key->binary_size, key->binary_crc);
	return 0;
}

int ds__symfile_parse(const void *map, size_t len, const struct ds__symfile_key *key,
		      struct ds__symbols_parts *parts, struct ds__blob **cus_out, char *why,
		      size_t whylen)
{
	const unsigned char *base = map;
	const struct header *h = map;
	const struct cu_entry *ent;
	const struct ds__cu_range *ranges;
	struct ds__blob *cus;
	uint64_t pos, off, at;
	const char *bad;
	int err;

	memset(parts, 0, sizeof(*parts));
	*cus_out = NULL;
	if (len < sizeof(*h))
		BAD(-EBADMSG, "%zu bytes: shorter than a header", len);
	if ((uintptr_t)map % 8)
		BAD(-EINVAL, "not 8-byte aligned in memory");
	err = check_header(h, len, key, why, whylen);
	if (err)
		return err;
	ent = (const void *)(base + h->cus_off);
	ranges = (const void *)(base + h->ranges_off);
	bad = ranges_bad(ranges, h->nranges, h->ncus, &at);
	if (bad)
		BAD(-EBADMSG, "range %llu %s", (unsigned long long)at, bad);
	pos = align8(h->ranges_off + (uint64_t)h->nranges * sizeof(*ranges));
	if (!place(&pos, h->elf_size, &off) || off != h->elf_off || (!h->elf_size && h->elf_sum))
		BAD(-EBADMSG, "its ELF part is out of place");
	for (uint32_t i = 0; i < h->ncus; i++) {
		if (ent[i].pad || (!ent[i].size && ent[i].sum) || !place(&pos, ent[i].size, &off) ||
		    off != ent[i].off ||
		    !place(&pos, ds__chunks_of(ent[i].size) * sizeof(uint32_t), &off))
			BAD(-EBADMSG, "CU %u is out of place", i);
	}
	if (pos != h->file_size)
		BAD(-EBADMSG, "its parts end at %llu, the file at %llu", (unsigned long long)pos,
		    (unsigned long long)h->file_size);
	cus = calloc(h->ncus ? h->ncus : 1, sizeof(*cus));
	if (!cus)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->ncus; i++)
		cus[i] = (struct ds__blob){
			.data = ent[i].size ? base + ent[i].off : NULL,
			.size = ent[i].size,
			.sum = ent[i].sum,
			.chunks = ent[i].size ? (const uint32_t *)(base + align8(ent[i].off +
										  ent[i].size))
					      : NULL,
		};
	parts->elf = (struct ds__blob){ .data = h->elf_size ? base + h->elf_off : NULL,
					.size = h->elf_size,
					.sum = h->elf_sum };
	parts->ncus = h->ncus;
	parts->cus = cus;
	parts->nranges = h->nranges;
	parts->ranges = ranges;
	*cus_out = cus;
	return 0;
}

/* ------------------------------------------------------ where it lives */

struct place {
	int dirfd;
	char name[NAME_MAX + 1];
	char path[PATH_MAX]; /* for messages */
	mode_t mode;
};

/* The directory (opened; made first with create) and name of the saved
 * index of di: its debuginfod cache entry when it came from debuginfod,
 * else the directory of local debuginfo's indexes. */
static int find_place(struct ds_context *ctx, const struct ds_debuginfo *di, bool create,
		      struct place *p)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];
	struct ds_cache *c = &ctx->cache;
	int err;

	p->dirfd = -1;
	if (ds_build_id_format(di->bid, hex, sizeof(hex)) < 0)
		return -EINVAL;
	if (di->source == DS_SOURCE_DEBUGINFOD_CACHE || di->source == DS_SOURCE_DEBUGINFOD) {
		snprintf(p->name, sizeof(p->name), "%s", ENTRY_NAME);
		snprintf(p->path, sizeof(p->path), "%s/%s/%s", c->root, hex, ENTRY_NAME);
		p->mode = 0400; /* as the cache's files */
		return ds__cache_entry_open(c, hex, false, &p->dirfd);
	}
	if (!c->symindex_root)
		return -ENOENT;
	snprintf(p->name, sizeof(p->name), "%s", hex);
	snprintf(p->path, sizeof(p->path), "%s/%s", c->symindex_root, hex);
	p->mode = 0644;
	err = ds__cache_symindex_dir(c, create, &p->dirfd);
	return err;
}

/* -------------------------------------------------------------- loading */

struct mapping {
	void *addr;
	size_t len;
	struct ds__blob *cus;
};

static void unmap(void *arg)
{
	struct mapping *m = arg;

	munmap(m->addr, m->len);
	free(m->cus);
	free(m);
}

int ds__symfile_load(struct ds_context *ctx, const struct ds_debuginfo *di,
		     const struct ds__symfile_key *key, const struct ds__aux_src *aux,
		     struct ds_symbols **out)
{
	struct ds__symbols_parts parts;
	struct mapping *m = NULL;
	struct place p;
	struct stat st;
	char why[256];
	int fd = -1, err;

	*out = NULL;
	if (ctx->cache.symindex_off)
		return -ENOTSUP;
	err = find_place(ctx, di, false, &p);
	if (err) {
		if (err != -ENOENT)
			ds_debug(ctx, "saved index of %s: no directory: %s",
				 atomic_load(&di->path), ds_strerror(err));
		goto out;
	}
	fd = openat(p.dirfd, p.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			ds_debug(ctx, "saved index %s: none", p.path);
		else
			ds_warn(ctx, "saved index %s: %s; ignored", p.path,
				err == -ELOOP ? "a symbolic link" : ds_strerror(err));
		goto out;
	}
	err = -EBADMSG;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ds_warn(ctx, "saved index %s: not a regular file; ignored", p.path);
		goto out;
	}
	/* The directory's rule holds for the file too, checked on the file
	 * opened: one that another user can write could have its names
	 * rewritten (with sums to match), or be cut under our mapping
	 * (SIGBUS).  The next save replaces it (a new file, renamed). */
	if (ds__cache_untrusted(&ctx->cache, &st, why, sizeof(why))) {
		ds_warn(ctx,
			"saved index %s: %s: not used, as another user could change it; "
			"built from the debuginfo instead",
			p.path, why);
		err = -EACCES;
		goto out;
	}
	if (st.st_size == 0 || (uint64_t)st.st_size > FILE_MAX ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		ds_warn(ctx, "saved index %s: %s (%lld bytes); ignored, to be rebuilt", p.path,
			st.st_size ? "too large" : "empty", (long long)st.st_size);
		goto out;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	m->len = (size_t)st.st_size;
	m->addr = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m->addr == MAP_FAILED) {
		err = -errno;
		free(m);
		m = NULL;
		ds_debug(ctx, "saved index %s: mmap: %s", p.path, ds_strerror(err));
		goto out;
	}
	err = ds__symfile_parse(m->addr, m->len, key, &parts, &m->cus, why, sizeof(why));
	if (err) {
		if (err == -ESTALE)
			ds_debug(ctx, "saved index %s: %s; to be rebuilt", p.path, why);
		else
			ds_warn(ctx, "saved index %s: %s; ignored, to be rebuilt", p.path, why);
		goto out;
	}
	err = ds__symbols_from_parts(&parts, unmap, m, out);
	if (err) {
		ds_warn(ctx, "saved index %s: refused by the index (%s); ignored, to be rebuilt",
			p.path, ds_strerror(err));
		goto out;
	}
	m = NULL; /* the index's now */
	/* A damaged CU is built from the debuginfo (open as long as the
	 * index: the store drops it with its debuginfo). */
	ds__symbols_fallback(*out, ctx, di->elf, atomic_load(&di->path), NULL, aux);
	/* Mapping it is a use: cleaning goes by access time, which a
	 * mapping does not always move (relatime, noatime). */
	futimens(fd, (struct timespec[2]){ { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } });
	ds_debug(ctx, "saved index %s: loaded (%zu CUs, %llu bytes)", p.path, parts.ncus,
		 (unsigned long long)st.st_size);
out:
	if (m)
		unmap(m);
	if (fd >= 0)
		close(fd);
	if (p.dirfd >= 0)
		close(p.dirfd);
	return err;
}

/* --------------------------------------------------------------- saving */

/* A CU of the index being saved, as the segments it is in. */
struct save_cu {
	struct ds_context *ctx;
	struct ds_symbols *S;
};

static int save_cu(void *arg, size_t i, struct ds__cu_hdr_buf *hdr,
		   struct ds__seg segs[DS__BLOB_SEGS], size_t *nsegs, uint64_t *size,
		   uint32_t *sum, bool *have_sum)
{
	struct save_cu *sc = arg;

	/* (A host's cancel stops a long save between blobs.) */
	if (ds__cancelled(sc->ctx))
		return -ECANCELED;
	*nsegs = ds__symbols_cu_segs(sc->S, i, hdr, segs, size, sum, have_sum);
	return 0;
}

int ds__symfile_save(struct ds_context *ctx, const struct ds_debuginfo *di,
		     const struct ds__symfile_key *key, struct ds_symbols *S, char **path_out)
{
	struct save_cu sc = { .ctx = ctx, .S = S };
	struct ds__symbols_parts parts;
	char tmp[NAME_MAX + 1] = "";
	struct place p = { .dirfd = -1 };
	const char *what = "";
	int fd = -1, err;

	if (path_out)
		*path_out = NULL;
	if (ctx->cache.symindex_off)
		return -ENOTSUP;
	err = ds__symbols_parts_head(S, &parts);
	if (err) {
		ds_debug(ctx, "index of %s: not saved: %s", atomic_load(&di->path),
			 err == -ENODATA ? "no DWARF in it" : ds_strerror(err));
		return err;
	}
	/* What the split units or the dwz alt file would give is not in S
	 * (they were not found when its DWARF was read), and the index saved
	 * would keep it out. */
	if (ds__symbols_partial(S)) {
		ds_debug(ctx,
			 "index of %s: not saved: a split unit's .dwo or .dwp, or its dwz alt "
			 "file, was not here",
			 atomic_load(&di->path));
		return -ENOENT;
	}
	err = find_place(ctx, di, true, &p);
	if (err) {
		what = "directory";
		goto out;
	}
	fd = ds__cache_tmp_open(p.dirfd, p.name, tmp, sizeof(tmp));
	if (fd < 0) {
		err = fd;
		tmp[0] = 0;
		what = "temporary file";
		goto out;
	}
	what = "write";
	err = ds__cancelled(ctx) ? -ECANCELED
				  : write_parts(fd, key, &parts, save_cu, &sc);
	/* The host's cancel came while it was written: not renamed, removed. */
	if (!err && ds__cancelled(ctx))
		err = -ECANCELED;
	if (!err && fchmod(fd, p.mode) != 0)
		err = -errno;
	if (!err && renameat(p.dirfd, tmp, p.dirfd, p.name) != 0)
		err = -errno;
	if (!err)
		tmp[0] = 0;
out:
	if (fd >= 0)
		close(fd);
	if (p.dirfd >= 0) {
		ds__cache_abort(p.dirfd, tmp);
		close(p.dirfd);
	}
	if (err) {
		ds_debug(ctx, "saved index %s: not saved (%s: %s)", p.path[0] ? p.path : "-", what,
			 ds_strerror(err));
	} else {
		ds_debug(ctx, "saved index %s: saved (%zu CUs)", p.path, parts.ncus);
		if (path_out && !(*path_out = strdup(p.path)))
			err = -ENOMEM;
	}
	return err;
}
