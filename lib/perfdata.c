/* SPDX-License-Identifier: MIT */
/*
 * perf.data reader (file mode, "PERFILE2"): the header and the build-ID
 * table of the HEADER_BUILD_ID feature section.  The file is read whole
 * (bounded) or given as memory; every offset and size is checked against
 * what is there, and either byte order is read (a file from the other
 * endianness is swapped, not rejected).
 *
 * Layout (tools/perf/Documentation/perf.data-file-format.txt):
 *   header  @0: magic "PERFILE2", size, attr_size, attrs{off,size},
 *               data{off,size}, event_types{off,size}, features[4] (bits)
 *   feature sections: at data.off + data.size, one {off, size} per set
 *               bit, in bit order; HEADER_BUILD_ID is bit 2
 *   build-ID record: perf_event_header{u32 type, u16 misc, u16 size},
 *               s32 pid @8, build_id[20] @12, u8 size @32 (valid when
 *               misc bit 15 is set, else 20), filename @36, NUL-padded
 */
#define _GNU_SOURCE
#include "internal.h"

#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERF_MAGIC2 0x32454c4946524550ULL /* "PERFILE2" */
#define HEADER_SIZE 104
#define FEAT_BUILD_ID 2
#define NFEATS 256
#define MISC_BUILD_ID_SIZE (1u << 15)
#define BUILD_ID_RECORD_MIN 36
#define PERF_DATA_MAX (16ULL << 30) /* what we agree to read into memory */

struct ds_perf_data {
	unsigned char *buf;
	size_t len;
	bool owned;
	bool swap;
	uint64_t data_off, data_size;
	uint64_t features[4];
	struct ds_perf_build_id *bids;
	size_t nbids;
	bool no_build_id_table;
};

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static uint64_t u64(const struct ds_perf_data *p, uint64_t off)
{
	uint64_t v;

	memcpy(&v, p->buf + off, 8);
	return p->swap ? bswap_64(v) : v;
}

static uint32_t u32(const struct ds_perf_data *p, uint64_t off)
{
	uint32_t v;

	memcpy(&v, p->buf + off, 4);
	return p->swap ? bswap_32(v) : v;
}

static uint16_t u16(const struct ds_perf_data *p, uint64_t off)
{
	uint16_t v;

	memcpy(&v, p->buf + off, 2);
	return p->swap ? bswap_16(v) : v;
}

/* [off, off + size) inside the file? */
static bool within(const struct ds_perf_data *p, uint64_t off, uint64_t size)
{
	return off <= p->len && size <= p->len - off;
}

static int read_build_ids(struct ds_perf_data *p, uint64_t off, uint64_t size, char *err,
			  size_t errlen)
{
	uint64_t end = off + size;
	size_t cap = 0;

	while (off < end) {
		struct ds_perf_build_id *b;
		uint16_t misc, rsize;
		uint8_t bsize;
		size_t namelen;

		if (end - off < 8)
			return fail(err, errlen, -EBADMSG,
				    "build-ID table: record header cut at offset %llu",
				    (unsigned long long)off);
		misc = u16(p, off + 4);
		rsize = u16(p, off + 6);
		if (rsize < BUILD_ID_RECORD_MIN || rsize > end - off)
			return fail(err, errlen, -EBADMSG,
				    "build-ID table: record of size %u at offset %llu does not fit",
				    rsize, (unsigned long long)off);
		bsize = (misc & MISC_BUILD_ID_SIZE) ? p->buf[off + 32] : 20;
		if (bsize == 0 || bsize > 20)
			return fail(err, errlen, -EBADMSG,
				    "build-ID table: build ID size %u at offset %llu", bsize,
				    (unsigned long long)off);
		namelen = strnlen((const char *)p->buf + off + 36, rsize - 36);
		if (namelen == (size_t)(rsize - 36))
			return fail(err, errlen, -EBADMSG,
				    "build-ID table: file name not terminated at offset %llu",
				    (unsigned long long)off);
		if (p->nbids == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct ds_perf_build_id *nb = realloc(p->bids, ncap * sizeof(*nb));

			if (!nb)
				return -ENOMEM;
			p->bids = nb;
			cap = ncap;
		}
		b = &p->bids[p->nbids++];
		memset(b, 0, sizeof(*b));
		b->pid = (int32_t)u32(p, off + 8);
		b->cpumode = misc & 7;
		b->build_id.size = bsize;
		memcpy(b->build_id.data, p->buf + off + 12, bsize);
		b->filename = (const char *)p->buf + off + 36;
		off += rsize;
	}
	return 0;
}

/* The {offset, size} of a feature: the n-th set bit's entry of the table
 * at data.offset + data.size.  0, -ENOENT (bit not set), or -EBADMSG with
 * a message naming the offset. */
static int feature(const struct ds_perf_data *p, unsigned bit, uint64_t *off, uint64_t *size,
		   char *err, size_t errlen)
{
	uint64_t table = p->data_off + p->data_size, entry;
	unsigned idx = 0;

	if (!(p->features[bit / 64] >> (bit % 64) & 1))
		return -ENOENT;
	for (unsigned i = 0; i < bit; i++)
		idx += p->features[i / 64] >> (i % 64) & 1;
	entry = table + 16ULL * idx;
	if (table < p->data_off || !within(p, entry, 16))
		return fail(err, errlen, -EBADMSG,
			    "feature table entry %u at offset %llu beyond the file's %zu bytes", idx,
			    (unsigned long long)entry, p->len);
	*off = u64(p, entry);
	*size = u64(p, entry + 8);
	if (!within(p, *off, *size))
		return fail(err, errlen, -EBADMSG,
			    "feature section at offset %llu, size %llu (table entry at offset "
			    "%llu) beyond the file's %zu bytes",
			    (unsigned long long)*off, (unsigned long long)*size,
			    (unsigned long long)entry, p->len);
	return 0;
}

static int parse(struct ds_perf_data *p, char *err, size_t errlen)
{
	uint64_t magic, hsize, off = 0, size = 0;
	int rc;

	if (p->len < 16)
		return fail(err, errlen, -EBADMSG, "%zu bytes: too short for a perf.data header",
			    p->len);
	memcpy(&magic, p->buf, 8);
	if (magic == bswap_64(PERF_MAGIC2))
		p->swap = true;
	else if (magic != PERF_MAGIC2)
		return fail(err, errlen, -EBADMSG, "not a perf.data file (magic at offset 0)");
	hsize = u64(p, 8);
	if (hsize == 16)
		return fail(err, errlen, -EPROTONOSUPPORT,
			    "pipe-mode perf.data (perf record -o -) is not read yet");
	if (hsize < HEADER_SIZE)
		return fail(err, errlen, -EBADMSG, "header size %llu at offset 8",
			    (unsigned long long)hsize);
	if (p->len < HEADER_SIZE)
		return fail(err, errlen, -EBADMSG, "%zu bytes: the header ends at offset %d",
			    p->len, HEADER_SIZE);
	p->data_off = u64(p, 40);
	p->data_size = u64(p, 48);
	if (!within(p, p->data_off, p->data_size))
		return fail(err, errlen, -EBADMSG,
			    "data section (offset %llu, size %llu) beyond the file's %zu bytes",
			    (unsigned long long)p->data_off, (unsigned long long)p->data_size,
			    p->len);
	for (int i = 0; i < 4; i++)
		p->features[i] = u64(p, 72 + 8 * i);
	rc = feature(p, FEAT_BUILD_ID, &off, &size, err, errlen);
	if (rc == 0)
		return read_build_ids(p, off, size, err, errlen);
	if (rc == -ENOENT)
		p->no_build_id_table = true;
	return rc == -ENOENT ? 0 : rc;
}

DS_API void ds_perf_data_close(struct ds_perf_data *p)
{
	if (!p)
		return;
	if (p->owned)
		free(p->buf);
	free(p->bids);
	free(p);
}

static int open_buf(unsigned char *buf, size_t len, bool owned, struct ds_perf_data **out,
		    char *err, size_t errlen)
{
	struct ds_perf_data *p = calloc(1, sizeof(*p));
	int rc;

	if (!p) {
		if (owned)
			free(buf);
		return -ENOMEM;
	}
	p->buf = buf;
	p->len = len;
	p->owned = owned;
	rc = parse(p, err, errlen);
	if (rc) {
		ds_perf_data_close(p);
		return rc;
	}
	*out = p;
	return 0;
}

DS_API int ds_perf_data_open_mem(const void *buf, size_t len, struct ds_perf_data **out,
				 char *err, size_t errlen)
{
	unsigned char *copy;

	if ((!buf && len) || !out)
		return -EINVAL;
	/* A copy: the handle's strings point into it. */
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	return open_buf(copy, len, true, out, err, errlen);
}

DS_API int ds_perf_data_open(const char *path, struct ds_perf_data **out, char *err,
			     size_t errlen)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t got = 0;
	int fd, rc;

	if (!path || !out)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd);
		return fail(err, errlen, rc, "%s", strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL,
			    "not a regular file");
	}
	if ((uint64_t)st.st_size > PERF_DATA_MAX) {
		close(fd);
		return fail(err, errlen, -EFBIG, "%lld bytes: larger than we read",
			    (long long)st.st_size);
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* shorter than it said: parse what is there */
		got += (size_t)n;
	}
	close(fd);
	return open_buf(buf, got, true, out, err, errlen);
}

DS_API int ds_perf_data_build_ids(const struct ds_perf_data *p,
				  const struct ds_perf_build_id **out)
{
	*out = p ? p->bids : NULL;
	if (!p)
		return -EINVAL;
	/* perf record -z or --buildid-mmap write none: the build IDs are in
	 * the events, which this reader does not read yet. */
	if (p->no_build_id_table)
		return -ENOENT;
	return (int)(p->nbids > INT32_MAX ? INT32_MAX : p->nbids);
}

DS_API bool ds_perf_data_swapped(const struct ds_perf_data *p)
{
	return p && p->swap;
}
