/* SPDX-License-Identifier: MIT */
/*
 * perf.data reader: the header, attrs, feature sections and the records of
 * the data section, in file mode ("PERFILE2" with a 104-byte header) and
 * pipe mode (16-byte header; attrs, features and build IDs come as records).
 * The file is read whole (bounded) or given as memory; every offset and
 * size is checked against what is there, and either byte order is read (a
 * file from the other endianness is swapped, not rejected).  Compressed
 * records (perf record -z) hold one zstd stream across all of them: it is
 * decompressed into one buffer, bounded, whose records are listed in place
 * of the compressed records that carried them.
 *
 * The records are listed once, with their attr (found by sample id) and
 * timestamp, and sorted by time as perf's ordered events deliver them
 * (lib/perf/perfsession.c replays them).
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
#include "perf.h"
#include "perfdata.h"

#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define PERF_MAGIC2 0x32454c4946524550ULL /* "PERFILE2" */
#define HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16
#define NFEATS 256
#define MISC_BUILD_ID_SIZE (1u << 15)
#define BUILD_ID_RECORD_MIN 36
#define PERF_DATA_MAX (16ULL << 30) /* what we agree to read into memory */
#define ATTR_SIZE_VER0 64 /* the smallest perf_event_attr */
#define MAX_ATTRS 4096
/* Decompressed records: at most DECOMP_MAX, and at most DECOMP_FLOOR plus
 * RATIO_MAX times the compressed bytes, so that a small file cannot ask for
 * gigabytes.  The ratio is not perf's typical one: samples with
 * --call-graph dwarf carry near-identical stack copies, and a 20 KB
 * `perf record -z --call-graph dwarf` of a spinning program measured 136-200
 * at level 1 (perf's own ratio in the header); a bound of 200 refused such
 * recordings.  The floor covers the start of a stream, where a few KB hold
 * whole megabytes. */
#define DECOMP_MAX (8ULL << 30)
#define DECOMP_FLOOR (256ULL << 20)
#define RATIO_MAX 2048

/* Features (perf's HEADER_*) and record types this reader knows. */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CPUID = 9,
	FEAT_TOTAL_MEM = 10,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_COMPRESSED = 27,
};

enum {
	REC_LOST = 2,
	REC_HEADER_ATTR = 64,
	REC_HEADER_EVENT_TYPE = 65,
	REC_HEADER_TRACING_DATA = 66,
	REC_HEADER_BUILD_ID = 67,
	REC_FINISHED_ROUND = 68,
	REC_AUXTRACE = 71,
	REC_HEADER_FEATURE = 80,
	REC_COMPRESSED = 81,
	REC_FINISHED_INIT = 82,
	REC_COMPRESSED2 = 83,
};

#define IN_DBUF (1ULL << 63)

struct ds_perf_data {
	unsigned char *buf;
	size_t len;
	bool owned;
	size_t map_len; /* owned and mapped (buf_alloc()): its length; 0: malloc'd */
	bool swap;
	bool file_be; /* the file's byte order is big endian */
	bool pipe;
	uint64_t data_off, data_size;
	uint64_t features[4];
	struct ds_perf_build_id *bids;
	size_t nbids, bids_cap;
	bool have_build_ids;

	struct ds__perf_attr *attrs;
	unsigned int nattrs;
	struct id_attr {
		uint64_t id;
		unsigned int attr;
	} *ids;
	size_t nids, ids_cap;

	/* Decompressed records, and the stream decoder while reading. */
	unsigned char *dbuf;
	size_t dlen, dcap, dpos; /* dpos: first byte not yet listed */
	uint64_t dsrc_off; /* file offset of the compressed record being read */
	uint64_t compressed_in;
	ZSTD_DStream *zd;
	int comp_type; /* HEADER_COMPRESSED's type: 1 zstd; 0 unknown */

	struct ds__perf_ent *recs;
	size_t nrecs, recs_cap;
	/* A file mapped read-only (its pages can go and come back): for
	 * each block of BLOCK_RECS records in time order, the lowest file
	 * offset of a record in it or after it (ds__perf_records_done()). */
	bool file_mapped;
	uint64_t *low_after;

	char *str[FEAT_CMDLINE + 1]; /* string features, by feature number */
	char **event_names; /* HEADER_EVENT_DESC's, in attr order */
	unsigned int nevent_names;
	/* HEADER_NRCPUS (u32 available, u32 online) and HEADER_TOTAL_MEM
	 * (u64, kB), when the file has them */
	bool have_nrcpus, have_total_mem;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem;
	uint64_t nr_samples, nr_lost, nr_unknown, nr_records;
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

uint64_t ds__perf_rd64(const struct ds_perf_data *p, const void *q)
{
	uint64_t v;

	memcpy(&v, q, 8);
	return p->swap ? bswap_64(v) : v;
}

uint32_t ds__perf_rd32(const struct ds_perf_data *p, const void *q)
{
	uint32_t v;

	memcpy(&v, q, 4);
	return p->swap ? bswap_32(v) : v;
}

uint16_t ds__perf_rd16(const struct ds_perf_data *p, const void *q)
{
	uint16_t v;

	memcpy(&v, q, 2);
	return p->swap ? bswap_16(v) : v;
}

static uint64_t u64(const struct ds_perf_data *p, uint64_t off)
{
	return ds__perf_rd64(p, p->buf + off);
}

/* [off, off + size) inside the file? */
static bool within(const struct ds_perf_data *p, uint64_t off, uint64_t size)
{
	return off <= p->len && size <= p->len - off;
}

/* One build-ID record (a table entry, or a pipe-mode record) at q, rsize
 * bytes; strings point into the file.  off is its file offset. */
static int add_build_id(struct ds_perf_data *p, const unsigned char *q, uint16_t rsize,
			uint64_t off, char *err, size_t errlen)
{
	struct ds_perf_build_id *b, *nb;
	uint16_t misc = ds__perf_rd16(p, q + 4);
	uint8_t bsize = (misc & MISC_BUILD_ID_SIZE) ? q[32] : 20;
	size_t namelen;

	if (rsize < BUILD_ID_RECORD_MIN)
		return fail(err, errlen, -EBADMSG,
			    "build-ID record of size %u at offset %llu is too short", rsize,
			    (unsigned long long)off);
	if (bsize == 0 || bsize > 20)
		return fail(err, errlen, -EBADMSG, "build-ID table: build ID size %u at offset %llu",
			    bsize, (unsigned long long)off);
	namelen = strnlen((const char *)q + 36, rsize - 36);
	if (namelen == (size_t)(rsize - 36))
		return fail(err, errlen, -EBADMSG,
			    "build-ID table: file name not terminated at offset %llu",
			    (unsigned long long)off);
	nb = ds__grow(p->bids, &p->bids_cap, p->nbids, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	p->bids = nb;
	b = &p->bids[p->nbids++];
	memset(b, 0, sizeof(*b));
	b->pid = (int32_t)ds__perf_rd32(p, q + 8);
	b->cpumode = misc & 7;
	b->build_id.size = bsize;
	memcpy(b->build_id.data, q + 12, bsize);
	b->filename = (const char *)q + 36;
	p->have_build_ids = true;
	return 0;
}

static int read_build_ids(struct ds_perf_data *p, uint64_t off, uint64_t size, char *err,
			  size_t errlen)
{
	uint64_t end = off + size;

	p->have_build_ids = true;
	while (off < end) {
		uint16_t rsize;
		int rc;

		if (end - off < 8)
			return fail(err, errlen, -EBADMSG,
				    "build-ID table: record header cut at offset %llu",
				    (unsigned long long)off);
		rsize = ds__perf_rd16(p, p->buf + off + 6);
		if (rsize < BUILD_ID_RECORD_MIN || rsize > end - off)
			return fail(err, errlen, -EBADMSG,
				    "build-ID table: record of size %u at offset %llu does not fit",
				    rsize, (unsigned long long)off);
		rc = add_build_id(p, p->buf + off, rsize, off, err, errlen);
		if (rc)
			return rc;
		off += rsize;
	}
	return 0;
}

/* A perf string ({u32 len; char s[len]}, NUL-padded) at [off, end);
 * *next gets the offset after it.  NULL when it does not fit. */
static char *read_string(const struct ds_perf_data *p, const unsigned char *base, uint64_t off,
			 uint64_t end, uint64_t *next)
{
	uint32_t len;
	size_t n;
	char *s;

	if (end - off < 4)
		return NULL;
	len = ds__perf_rd32(p, base + off);
	if (len > end - off - 4)
		return NULL;
	n = strnlen((const char *)base + off + 4, len);
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, base + off + 4, n);
	s[n] = 0;
	*next = off + 4 + len;
	return s;
}

/* The feature numbered feat, its data at base[off, off + size).  Features
 * this reader does not use are skipped; the ones it uses are checked. */
static int read_feature(struct ds_perf_data *p, unsigned int feat, const unsigned char *base,
			uint64_t off, uint64_t size, char *err, size_t errlen)
{
	uint64_t end = off + size, next;

	switch (feat) {
	case FEAT_BUILD_ID:
		if (base != p->buf)
			return 0;
		return read_build_ids(p, off, size, err, errlen);
	case FEAT_HOSTNAME:
	case FEAT_OSRELEASE:
	case FEAT_VERSION:
	case FEAT_ARCH:
	case FEAT_CPUDESC:
	case FEAT_CPUID:
		free(p->str[feat]);
		p->str[feat] = read_string(p, base, off, end, &next);
		break;
	case FEAT_NRCPUS:
		if (size >= 8) {
			p->nr_cpus_avail = ds__perf_rd32(p, base + off);
			p->nr_cpus_online = ds__perf_rd32(p, base + off + 4);
			p->have_nrcpus = true;
		}
		break;
	case FEAT_TOTAL_MEM:
		if (size >= 8) {
			p->total_mem = ds__perf_rd64(p, base + off);
			p->have_total_mem = true;
		}
		break;
	case FEAT_CMDLINE: {
		struct ds_strbuf sb = { 0 };
		uint32_t nr;

		if (size < 4)
			break;
		nr = ds__perf_rd32(p, base + off);
		off += 4;
		for (uint32_t i = 0; i < nr; i++) {
			char *arg = read_string(p, base, off, end, &next);

			if (!arg)
				break;
			ds__strbuf_addf(&sb, "%s%s", i ? " " : "", arg);
			free(arg);
			off = next;
		}
		free(p->str[FEAT_CMDLINE]);
		p->str[FEAT_CMDLINE] = sb.buf;
		break;
	}
	case FEAT_EVENT_DESC: {
		/* u32 nr, u32 attr size; each: attr, u32 nr_ids, string, ids */
		uint32_t nr, asize;

		if (size < 8 || p->event_names)
			break;
		nr = ds__perf_rd32(p, base + off);
		asize = ds__perf_rd32(p, base + off + 4);
		off += 8;
		if (nr > MAX_ATTRS || nr > size / 8)
			break;
		/* One more: a name read before its entry was refused is freed too. */
		p->event_names = calloc(nr + 1, sizeof(*p->event_names));
		if (!p->event_names)
			return -ENOMEM;
		for (uint32_t i = 0; i < nr; i++) {
			uint32_t nids;

			if (asize > end - off || end - off - asize < 4)
				break;
			nids = ds__perf_rd32(p, base + off + asize);
			p->event_names[i] = read_string(p, base, off + asize + 4, end, &next);
			if (!p->event_names[i] || nids > (end - next) / 8)
				break;
			p->nevent_names = i + 1;
			off = next + 8ULL * nids;
		}
		break;
	}
	case FEAT_COMPRESSED:
		/* u32 version, type, level, ratio, mmap_len */
		if (size >= 8)
			p->comp_type = (int)ds__perf_rd32(p, base + off + 4);
		if (p->comp_type != 1)
			return fail(err, errlen, -EPROTONOSUPPORT,
				    "compressed with method %d (feature at offset %llu); only zstd "
				    "(1) is read",
				    p->comp_type, (unsigned long long)off);
		break;
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

/* --------------------------------------------------------------- attrs */

/* The attr's flag word as a bit set (bit n = perf_event_attr's n-th
 * bitfield).  A compiler for a big-endian machine allocates bitfields from
 * the most significant bit of the first byte; perf's readers reverse the
 * bits of each byte for such files (swap_bitfield), and so do we. */
static uint64_t attr_flags(const struct ds_perf_data *p, const unsigned char *q)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++) {
		unsigned b = q[i];

		if (p->file_be) {
			b = ((b & 0xf0) >> 4) | ((b & 0x0f) << 4);
			b = ((b & 0xcc) >> 2) | ((b & 0x33) << 2);
			b = ((b & 0xaa) >> 1) | ((b & 0x55) << 1);
		}
		v |= (uint64_t)b << (8 * i);
	}
	return v;
}

static int add_attr(struct ds_perf_data *p, const unsigned char *q, uint64_t size, uint64_t off,
		    char *err, size_t errlen)
{
	struct ds__perf_attr *a, *na;

	if (size < ATTR_SIZE_VER0)
		return fail(err, errlen, -EBADMSG, "attr at offset %llu: %llu bytes, at least %d",
			    (unsigned long long)off, (unsigned long long)size, ATTR_SIZE_VER0);
	if (p->nattrs >= MAX_ATTRS)
		return fail(err, errlen, -EBADMSG, "attr at offset %llu: more than %d attrs",
			    (unsigned long long)off, MAX_ATTRS);
	na = reallocarray(p->attrs, p->nattrs + 1, sizeof(*na));
	if (!na)
		return -ENOMEM;
	p->attrs = na;
	a = &p->attrs[p->nattrs++];
	memset(a, 0, sizeof(*a));
	a->type = ds__perf_rd32(p, q);
	a->config = ds__perf_rd64(p, q + 8);
	a->sample_type = ds__perf_rd64(p, q + 24);
	a->read_format = ds__perf_rd64(p, q + 32);
	a->flags = attr_flags(p, q + 40);
	/* Later fields, as far as this attr's size has them (VER2: 80
	 * bytes, VER3: 96): the branch stack's layout, the user registers'
	 * mask (the sample's stack size is in each sample). */
	if (size >= 80)
		a->branch_sample_type = ds__perf_rd64(p, q + 72);
	if (size >= 88)
		a->regs_user = ds__perf_rd64(p, q + 80);
	return 0;
}

static int add_ids(struct ds_perf_data *p, const unsigned char *q, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct id_attr *v = ds__grow(p->ids, &p->ids_cap, p->nids, sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->ids = v;
		p->ids[p->nids].id = ds__perf_rd64(p, q + 8 * i);
		p->ids[p->nids].attr = p->nattrs - 1;
		p->nids++;
	}
	return 0;
}

static int read_attrs(struct ds_perf_data *p, char *err, size_t errlen)
{
	uint64_t asize = u64(p, 16), off = u64(p, 24), size = u64(p, 32);

	if (!within(p, off, size))
		return fail(err, errlen, -EBADMSG,
			    "attrs section (offset %llu, size %llu) beyond the file's %zu bytes",
			    (unsigned long long)off, (unsigned long long)size, p->len);
	if (asize < ATTR_SIZE_VER0 + 16 || size % asize)
		return fail(err, errlen, -EBADMSG,
			    "attr size %llu (header offset 16) does not divide the attrs "
			    "section's %llu bytes",
			    (unsigned long long)asize, (unsigned long long)size);
	for (uint64_t at = off; at < off + size; at += asize) {
		uint64_t ioff = u64(p, at + asize - 16), isize = u64(p, at + asize - 8);
		int rc = add_attr(p, p->buf + at, asize - 16, at, err, errlen);

		if (rc)
			return rc;
		if (!within(p, ioff, isize) || isize % 8)
			return fail(err, errlen, -EBADMSG,
				    "ids of the attr at offset %llu (offset %llu, size %llu) "
				    "beyond the file",
				    (unsigned long long)at, (unsigned long long)ioff,
				    (unsigned long long)isize);
		rc = add_ids(p, p->buf + ioff, isize / 8);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_attr *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void sort_ids(struct ds_perf_data *p)
{
	if (p->nids > 1)
		qsort(p->ids, p->nids, sizeof(*p->ids), cmp_id);
}

/* Where the sample id is in a SAMPLE record (from its start, 0: none) and
 * in the sample_id trailer of others (from its end, 0: none), as perf's
 * evlist id_pos/is_pos; the first attr decides for all, as in perf. */
static void id_positions(const struct ds_perf_data *p, unsigned *id_pos, unsigned *is_pos)
{
	uint64_t t = p->nattrs ? p->attrs[0].sample_type : 0;

	*id_pos = *is_pos = 0;
	if (t & DS__PERF_SAMPLE_IDENTIFIER) {
		*id_pos = 8;
		*is_pos = 8;
		return;
	}
	if (!(t & DS__PERF_SAMPLE_ID))
		return;
	*id_pos = 8 + 8 * (!!(t & DS__PERF_SAMPLE_IP) + !!(t & DS__PERF_SAMPLE_TID) +
			   !!(t & DS__PERF_SAMPLE_TIME) + !!(t & DS__PERF_SAMPLE_ADDR));
	*is_pos = 8 * (1 + !!(t & DS__PERF_SAMPLE_CPU) + !!(t & DS__PERF_SAMPLE_STREAM_ID));
}

unsigned int ds__perf_attr_of(const struct ds_perf_data *p, const unsigned char *rec,
			      uint16_t size, bool sample)
{
	unsigned id_pos, is_pos;
	struct id_attr key, *hit;

	if (p->nattrs <= 1 || !p->nids)
		return 0;
	id_positions(p, &id_pos, &is_pos);
	if (sample) {
		if (!id_pos || id_pos + 8 > size)
			return 0;
		key.id = ds__perf_rd64(p, rec + id_pos);
	} else {
		if (!is_pos || !(p->attrs[0].flags & DS__PERF_ATTR_SAMPLE_ID_ALL) ||
		    is_pos + 8 > size)
			return 0;
		key.id = ds__perf_rd64(p, rec + size - is_pos);
	}
	hit = bsearch(&key, p->ids, p->nids, sizeof(*p->ids), cmp_id);
	return hit ? hit->attr : 0;
}

/* The record's timestamp, or false when it has none. */
static bool rec_time(const struct ds_perf_data *p, const unsigned char *q, uint16_t size,
		     uint32_t type, unsigned attr, uint64_t *time)
{
	const struct ds__perf_attr *a = p->nattrs ? &p->attrs[attr] : NULL;
	uint64_t t = a ? a->sample_type : 0;
	unsigned pos;

	if (!a || !(t & DS__PERF_SAMPLE_TIME) || type >= REC_HEADER_ATTR)
		return false;
	if (type == DS__PERF_REC_SAMPLE) {
		pos = 8 + 8 * (!!(t & DS__PERF_SAMPLE_IDENTIFIER) + !!(t & DS__PERF_SAMPLE_IP) +
			       !!(t & DS__PERF_SAMPLE_TID));
		if (pos + 8 > size)
			return false;
		*time = ds__perf_rd64(p, q + pos);
		return true;
	}
	if (!(a->flags & DS__PERF_ATTR_SAMPLE_ID_ALL))
		return false;
	/* The trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
	pos = 8 * (!!(t & DS__PERF_SAMPLE_TIME) + !!(t & DS__PERF_SAMPLE_ID) +
		   !!(t & DS__PERF_SAMPLE_STREAM_ID) + !!(t & DS__PERF_SAMPLE_CPU) +
		   !!(t & DS__PERF_SAMPLE_IDENTIFIER));
	if (pos + 8 > size)
		return false;
	*time = ds__perf_rd64(p, q + size - pos);
	return true;
}

/* ------------------------------------------------------------- records */

static int list_record(struct ds_perf_data *p, uint64_t loc, const unsigned char *q,
		       uint32_t type, uint16_t size)
{
	struct ds__perf_ent *r, *nr;

	/* (PERF_DATA_MAX bytes hold fewer records: seq fits.) */
	if (p->nrecs >= UINT32_MAX)
		return -EFBIG;
	nr = ds__grow(p->recs, &p->recs_cap, p->nrecs, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	p->recs = nr;
	r = &p->recs[p->nrecs++];
	*r = (struct ds__perf_ent){ .loc = loc, .type = type, .size = size };
	r->attr = ds__perf_attr_of(p, q, size, type == DS__PERF_REC_SAMPLE);
	r->has_time = rec_time(p, q, size, type, r->attr, &r->time);
	return 0;
}

static int walk(struct ds_perf_data *p, const unsigned char *base, uint64_t start, uint64_t end,
		bool in_dbuf, uint64_t *stop, char *err, size_t errlen);

/* Decompress the payload of a compressed record into dbuf and list the
 * records that are complete; a record may continue in the next one. */
static int decompress(struct ds_perf_data *p, const unsigned char *src, size_t n, uint64_t off,
		      char *err, size_t errlen)
{
	ZSTD_inBuffer in = { src, n, 0 };
	uint64_t limit;
	int rc;

	if (p->comp_type != 0 && p->comp_type != 1)
		return fail(err, errlen, -EPROTONOSUPPORT,
			    "compressed record at offset %llu: method %d, not zstd",
			    (unsigned long long)off, p->comp_type);
	if (!p->zd) {
		p->zd = ZSTD_createDStream();
		if (!p->zd || ZSTD_isError(ZSTD_initDStream(p->zd)))
			return -ENOMEM;
	}
	p->compressed_in += n;
	limit = DECOMP_FLOOR + p->compressed_in * RATIO_MAX;
	if (limit > DECOMP_MAX)
		limit = DECOMP_MAX;
	/* Until the input is used up and zstd had room to spare: output it
	 * could not place stays in its buffers until asked again. */
	for (bool full = true; in.pos < in.size || full;) {
		ZSTD_outBuffer out;
		size_t ret, in_before;

		if (p->dcap - p->dlen < ZSTD_DStreamOutSize()) {
			size_t ncap = p->dcap ? 2 * p->dcap : 4 * ZSTD_DStreamOutSize();
			unsigned char *nb;

			if (ncap > limit + ZSTD_DStreamOutSize())
				ncap = limit + ZSTD_DStreamOutSize();
			if (ncap <= p->dcap || p->dlen >= limit)
				return fail(err, errlen, -EFBIG,
					    "compressed record at offset %llu: more than %llu "
					    "bytes decompressed from %llu",
					    (unsigned long long)off, (unsigned long long)p->dlen,
					    (unsigned long long)p->compressed_in);
			nb = realloc(p->dbuf, ncap);
			if (!nb)
				return -ENOMEM;
			p->dbuf = nb;
			p->dcap = ncap;
		}
		out = (ZSTD_outBuffer){ p->dbuf + p->dlen, p->dcap - p->dlen, 0 };
		in_before = in.pos;
		ret = ZSTD_decompressStream(p->zd, &out, &in);
		if (ZSTD_isError(ret))
			return fail(err, errlen, -EBADMSG,
				    "compressed record at offset %llu: zstd: %s",
				    (unsigned long long)off, ZSTD_getErrorName(ret));
		p->dlen += out.pos;
		full = out.pos == out.size;
		if (!out.pos && in.pos == in_before) {
			if (in.pos == in.size)
				break; /* nothing more before the next record's input */
			return fail(err, errlen, -EBADMSG,
				    "compressed record at offset %llu: zstd made no progress",
				    (unsigned long long)off);
		}
	}
	p->dsrc_off = off;
	rc = walk(p, p->dbuf, p->dpos, p->dlen, true, &p->dpos, err, errlen);
	return rc;
}

/* List the records of base[start, end).  In dbuf, a record cut at the end
 * waits for the next compressed record (*stop: where it starts); in the
 * file, it is an error. */
static int walk(struct ds_perf_data *p, const unsigned char *base, uint64_t start, uint64_t end,
		bool in_dbuf, uint64_t *stop, char *err, size_t errlen)
{
	uint64_t off = start;
	int rc;

	while (off < end) {
		const unsigned char *q = base + off;
		uint64_t at = in_dbuf ? p->dsrc_off : off, extra = 0;
		uint32_t type;
		uint16_t size;

		if (end - off < 8) {
			if (in_dbuf)
				break;
			return fail(err, errlen, -EBADMSG,
				    "record header at offset %llu cut by the end of the data at "
				    "%llu",
				    (unsigned long long)off, (unsigned long long)end);
		}
		type = ds__perf_rd32(p, q);
		size = ds__perf_rd16(p, q + 6);
		if (size < 8)
			return fail(err, errlen, -EBADMSG, "record at offset %llu%s: size %u",
				    (unsigned long long)at, in_dbuf ? " (compressed)" : "", size);
		if (size > end - off) {
			if (in_dbuf)
				break;
			return fail(err, errlen, -EBADMSG,
				    "record at offset %llu of size %u runs past the end of the "
				    "data at %llu",
				    (unsigned long long)off, size, (unsigned long long)end);
		}
		p->nr_records++;
		switch (type) {
		case REC_HEADER_ATTR: {
			uint32_t asize;

			if (size < 8 + ATTR_SIZE_VER0)
				return fail(err, errlen, -EBADMSG,
					    "attr record at offset %llu: size %u", (unsigned long long)at,
					    size);
			asize = ds__perf_rd32(p, q + 8 + 4);
			if (asize < ATTR_SIZE_VER0 || asize > size - 8u || (size - 8u - asize) % 8)
				return fail(err, errlen, -EBADMSG,
					    "attr record at offset %llu: attr size %u in a record of %u",
					    (unsigned long long)at, asize, size);
			rc = add_attr(p, q + 8, asize, at, err, errlen);
			if (!rc)
				rc = add_ids(p, q + 8 + asize, (size - 8u - asize) / 8);
			if (!rc)
				sort_ids(p);
			break;
		}
		case REC_HEADER_BUILD_ID:
			rc = in_dbuf ? 0 : add_build_id(p, q, size, at, err, errlen);
			break;
		case REC_HEADER_FEATURE:
			rc = 0;
			if (size >= 16 && !in_dbuf) {
				uint64_t feat = ds__perf_rd64(p, q + 8);

				if (feat < NFEATS)
					rc = read_feature(p, (unsigned)feat, base, off + 16, size - 16u,
							  err, errlen);
			}
			break;
		case REC_HEADER_TRACING_DATA:
		case REC_AUXTRACE:
			/* A payload follows that the record's size leaves out:
			 * tracing data u32 size @8 (already 8-aligned), AUXTRACE
			 * u64 size @8. */
			if (size < 16)
				return fail(err, errlen, -EBADMSG, "record at offset %llu: size %u",
					    (unsigned long long)at, size);
			extra = type == REC_AUXTRACE ? ds__perf_rd64(p, q + 8)
						     : ds__perf_rd32(p, q + 8);
			extra = (extra + 7) & ~7ULL;
			if (extra > end - off - size)
				return fail(err, errlen, -EBADMSG,
					    "record at offset %llu: a payload of %llu bytes runs past "
					    "the end of the data",
					    (unsigned long long)at, (unsigned long long)extra);
			rc = 0;
			break;
		case REC_COMPRESSED:
		case REC_COMPRESSED2: {
			uint64_t psize = size - 8u, poff = 8;

			if (in_dbuf) {
				rc = fail(err, errlen, -EBADMSG,
					  "compressed record inside a compressed record (offset %llu)",
					  (unsigned long long)at);
				break;
			}
			if (type == REC_COMPRESSED2) {
				if (size < 16)
					return fail(err, errlen, -EBADMSG,
						    "compressed record at offset %llu: size %u",
						    (unsigned long long)at, size);
				psize = ds__perf_rd64(p, q + 8);
				poff = 16;
				if (psize > size - 16u)
					return fail(err, errlen, -EBADMSG,
						    "compressed record at offset %llu: %llu bytes "
						    "of data in a record of %u",
						    (unsigned long long)at, (unsigned long long)psize,
						    size);
			}
			rc = decompress(p, q + poff, psize, at, err, errlen);
			break;
		}
		case REC_FINISHED_ROUND:
		case REC_FINISHED_INIT:
		case REC_HEADER_EVENT_TYPE:
			rc = 0;
			break;
		case DS__PERF_REC_MMAP:
		case DS__PERF_REC_COMM:
		case DS__PERF_REC_EXIT:
		case DS__PERF_REC_FORK:
		case DS__PERF_REC_SAMPLE:
		case DS__PERF_REC_MMAP2:
			if (type == DS__PERF_REC_SAMPLE)
				p->nr_samples++;
			rc = list_record(p, in_dbuf ? (off | IN_DBUF) : off, q, type, size);
			break;
		case REC_LOST:
			if (size >= 24)
				p->nr_lost += ds__perf_rd64(p, q + 16);
			rc = 0;
			break;
		default:
			/* perf's own types (64 and up) are bookkeeping we do not
			 * need; kernel types we do not decode are counted. */
			if (type < REC_HEADER_ATTR)
				p->nr_unknown++;
			rc = 0;
		}
		if (rc)
			return rc;
		off += size + extra;
	}
	if (stop)
		*stop = off;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct ds__perf_ent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_ord(const void *a, const void *b, void *recs)
{
	const struct ds__perf_ent *r = recs;

	return cmp_rec(&r[*(const uint32_t *)a], &r[*(const uint32_t *)b]);
}

/* Records without a timestamp keep their place: they take the time of the
 * record before them.  Then a stable sort by time, as perf's ordered
 * events deliver them.
 *
 * The records' indexes are sorted, 4 bytes each, and the records moved
 * into place after, not the 32-byte records themselves: glibc's qsort()
 * merges through a copy of what it sorts, and the free() of a copy that
 * big (7.4 MB for a -g recording of gcc's 231k records) raises glibc's
 * mmap threshold to its size, so every array the replay then grows by
 * doubling below it (the record list's readers: the profile's locations,
 * the folded stacks' tree) is grown in the heap, each old copy left there
 * as a hole: 21 MB of resident free heap at the end of that replay,
 * where the peak is.  A copy of the indexes raises it to an eighth. */
static void sort_records(struct ds_perf_data *p)
{
	uint64_t last = 0;
	uint32_t *ord;

	for (size_t i = 0; i < p->nrecs; i++) {
		struct ds__perf_ent *r = &p->recs[i];

		if (r->has_time)
			last = r->time;
		else
			r->time = last;
		r->seq = (uint32_t)i;
	}
	if (p->nrecs < 2) /* qsort's base may not be NULL, even for 0 */
		return;
	ord = malloc(p->nrecs * sizeof(*ord));
	if (!ord) {
		qsort(p->recs, p->nrecs, sizeof(*p->recs), cmp_rec);
		return;
	}
	for (size_t i = 0; i < p->nrecs; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, p->nrecs, sizeof(*ord), cmp_ord, p->recs);
	/* recs[k] becomes the old recs[ord[k]]: each cycle of the
	 * permutation followed once, a placed index marked ord[j] == j */
	for (size_t k = 0; k < p->nrecs; k++) {
		struct ds__perf_ent first;
		size_t j = k;

		if (ord[k] == k)
			continue;
		first = p->recs[k];
		while (ord[j] != k) {
			size_t next = ord[j];

			p->recs[j] = p->recs[next];
			ord[j] = (uint32_t)j;
			j = next;
		}
		p->recs[j] = first;
		ord[j] = (uint32_t)j;
	}
	free(ord);
}

#define BLOCK_RECS 4096

/* low_after[] of a mapped file (none, and nothing dropped, without
 * memory for it: a few bytes per thousand records). */
static void low_marks(struct ds_perf_data *p)
{
	size_t nb = p->nrecs / BLOCK_RECS + 1;
	uint64_t low = UINT64_MAX;

	if (!p->file_mapped || !(p->low_after = malloc(nb * sizeof(*p->low_after))))
		return;
	for (size_t b = nb; b-- > 0;) {
		size_t e = (b + 1) * BLOCK_RECS < p->nrecs ? (b + 1) * BLOCK_RECS : p->nrecs;

		for (size_t i = b * BLOCK_RECS; i < e; i++)
			if (!(p->recs[i].loc & IN_DBUF) && p->recs[i].loc < low)
				low = p->recs[i].loc;
		p->low_after[b] = low;
	}
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
	p->file_be = (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) != p->swap;
	hsize = u64(p, 8);
	if (hsize == PIPE_HEADER_SIZE) {
		p->pipe = true;
		p->data_off = PIPE_HEADER_SIZE;
		p->data_size = p->len - PIPE_HEADER_SIZE;
	} else {
		if (hsize < HEADER_SIZE)
			return fail(err, errlen, -EBADMSG, "header size %llu at offset 8",
				    (unsigned long long)hsize);
		if (p->len < HEADER_SIZE)
			return fail(err, errlen, -EBADMSG,
				    "%zu bytes: the header ends at offset %d", p->len, HEADER_SIZE);
		p->data_off = u64(p, 40);
		p->data_size = u64(p, 48);
		if (!within(p, p->data_off, p->data_size))
			return fail(err, errlen, -EBADMSG,
				    "data section (offset %llu, size %llu) beyond the file's %zu "
				    "bytes",
				    (unsigned long long)p->data_off,
				    (unsigned long long)p->data_size, p->len);
		for (int i = 0; i < 4; i++)
			p->features[i] = u64(p, 72 + 8 * i);
		for (unsigned bit = 0; bit < NFEATS; bit++) {
			rc = feature(p, bit, &off, &size, err, errlen);
			if (rc == -ENOENT)
				continue;
			if (!rc)
				rc = read_feature(p, bit, p->buf, off, size, err, errlen);
			if (rc)
				return rc;
		}
		rc = read_attrs(p, err, errlen);
		if (rc)
			return rc;
		sort_ids(p);
	}
	rc = walk(p, p->buf, p->data_off, p->data_off + p->data_size, false, NULL, err, errlen);
	if (rc)
		return rc;
	if (p->dpos < p->dlen)
		return fail(err, errlen, -EBADMSG,
			    "compressed records end inside a record (%zu bytes left over)",
			    p->dlen - p->dpos);
	ZSTD_freeDStream(p->zd);
	p->zd = NULL;
	/* (dbuf is final: ds__perf_record() makes locations pointers.) */
	sort_records(p);
	low_marks(p);
	return 0;
}

/* Room for a recording read whole (a big file that cannot be mapped: see
 * ds_perf_data_open()).  A big one is anonymous memory populated in one
 * go: faulting in 150 MB of malloc'd pages one by one cost more than the
 * read. */
#define BUF_MAP_MIN (4u << 20)

static unsigned char *buf_alloc(size_t size, size_t *map_len)
{
	void *m;

	*map_len = 0;
	if (size < BUF_MAP_MIN)
		return malloc(size ? size : 1);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	*map_len = size;
	return m;
}

static void buf_free(unsigned char *buf, size_t map_len)
{
	if (map_len)
		munmap(buf, map_len);
	else
		free(buf);
}

DS_API void ds_perf_data_close(struct ds_perf_data *p)
{
	if (!p)
		return;
	if (p->owned)
		buf_free(p->buf, p->map_len);
	free(p->bids);
	free(p->attrs);
	free(p->ids);
	free(p->dbuf);
	ZSTD_freeDStream(p->zd);
	free(p->recs);
	free(p->low_after);
	for (size_t i = 0; i < sizeof(p->str) / sizeof(p->str[0]); i++)
		free(p->str[i]);
	for (unsigned i = 0; p->event_names && i <= p->nevent_names; i++)
		free(p->event_names[i]);
	free(p->event_names);
	free(p);
}

static int open_buf(unsigned char *buf, size_t len, bool owned, size_t map_len,
		    bool file_mapped, struct ds_perf_data **out, char *err, size_t errlen)
{
	struct ds_perf_data *p = calloc(1, sizeof(*p));
	int rc;

	if (!p) {
		if (owned)
			buf_free(buf, map_len);
		return -ENOMEM;
	}
	p->buf = buf;
	p->len = len;
	p->owned = owned;
	p->map_len = map_len;
	p->file_mapped = file_mapped;
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
	return open_buf(copy, len, true, 0, false, out, err, errlen);
}

DS_API int ds_perf_data_open(const char *path, struct ds_perf_data **out, char *err,
			     size_t errlen)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t got = 0, map_len;
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
	/* A big file is mapped, as perf maps it: a --call-graph dwarf
	 * recording is 8 KiB a sample, and reading 150 MB into anonymous
	 * memory spent more time clearing and copying pages than everything
	 * else together.  (Like every mapping of a file, it must not shrink
	 * while open.)  Where mapping fails, it is read. */
	if ((size_t)st.st_size >= BUF_MAP_MIN) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd,
			       0);

		if (m != MAP_FAILED) {
			close(fd);
			return open_buf(m, (size_t)st.st_size, true, (size_t)st.st_size, true, out,
					err, errlen);
		}
	}
	buf = buf_alloc((size_t)st.st_size, &map_len);
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
	return open_buf(buf, got, true, map_len, false, out, err, errlen);
}

DS_API int ds_perf_data_build_ids(const struct ds_perf_data *p,
				  const struct ds_perf_build_id **out)
{
	*out = p ? p->bids : NULL;
	if (!p)
		return -EINVAL;
	/* perf record -z or --buildid-mmap write none: the build IDs are
	 * then in MMAP2 events, or only in the files. */
	if (!p->have_build_ids)
		return -ENOENT;
	return (int)(p->nbids > INT32_MAX ? INT32_MAX : p->nbids);
}

DS_API bool ds_perf_data_swapped(const struct ds_perf_data *p)
{
	return p && p->swap;
}

DS_API void ds_perf_data_info(const struct ds_perf_data *p, struct ds_perf_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	out->hostname = p->str[FEAT_HOSTNAME];
	out->osrelease = p->str[FEAT_OSRELEASE];
	out->arch = p->str[FEAT_ARCH];
	out->perf_version = p->str[FEAT_VERSION];
	out->cmdline = p->str[FEAT_CMDLINE];
	out->pipe = p->pipe;
	out->compressed = p->compressed_in > 0;
	out->nr_attrs = p->nattrs;
	out->nr_records = p->nr_records;
	out->nr_samples = p->nr_samples;
	out->nr_lost = p->nr_lost;
	out->nr_unknown = p->nr_unknown;
}

DS_API void ds_perf_data_host(const struct ds_perf_data *p, struct ds_perf_host *out)
{
	size_t sz = out->sz < sizeof(*out) ? out->sz : sizeof(*out);
	struct ds_perf_host h = { .sz = sz };

	if (p) {
		h.cpudesc = p->str[FEAT_CPUDESC];
		h.cpuid = p->str[FEAT_CPUID];
		h.have_nrcpus = p->have_nrcpus;
		h.nr_cpus_online = p->nr_cpus_online;
		h.nr_cpus_avail = p->nr_cpus_avail;
		h.have_total_mem = p->have_total_mem;
		h.total_mem_kb = p->total_mem;
	}
	memcpy(out, &h, sz); /* a caller's older, shorter struct: its fields */
}

DS_API const char *ds_perf_data_event_name(const struct ds_perf_data *p, unsigned int attr)
{
	return p && attr < p->nevent_names ? p->event_names[attr] : NULL;
}

const struct ds__perf_attr *ds__perf_attrs(const struct ds_perf_data *p, unsigned int *n)
{
	*n = p->nattrs;
	return p->attrs;
}

const struct ds__perf_ent *ds__perf_records(const struct ds_perf_data *p, size_t *n)
{
	*n = p->nrecs;
	return p->recs;
}

void ds__perf_record(const struct ds_perf_data *p, const struct ds__perf_ent *e,
		     struct ds__perf_rec *out)
{
	bool dbuf = e->loc & IN_DBUF;

	*out = (struct ds__perf_rec){
		.p = dbuf ? p->dbuf + (e->loc & ~IN_DBUF) : p->buf + e->loc,
		.loc = e->loc,
		.file_off = dbuf ? p->dsrc_off : e->loc,
		.time = e->time,
		.seq = e->seq,
		.type = e->type,
		.size = e->size,
		.has_time = e->has_time,
		.attr = e->attr,
	};
}

/* Read in time order, a recording's records move through the file
 * (perf writes them a round at a time), so the pages below the lowest
 * record still to come are done with: dropped once 1 MiB of them is,
 * perf.data's share of the RSS stays about a block's spread instead of
 * the file.  (In 8 MiB steps, up to 8 MiB more stayed: the last 8 to 16
 * MiB of the file were resident to the end of the replay, where the
 * profile is largest.  A step is one madvise() every 4096 records at
 * most.) */
void ds__perf_records_done(const struct ds_perf_data *p, size_t i, uint64_t *done)
{
	uint64_t low, from;
	long page = sysconf(_SC_PAGESIZE);

	if (!p->low_after || i % BLOCK_RECS || page <= 0)
		return;
	low = i / BLOCK_RECS <= p->nrecs / BLOCK_RECS ? p->low_after[i / BLOCK_RECS] : UINT64_MAX;
	if (low > p->data_off + p->data_size)
		low = p->data_off + p->data_size; /* (the features after the data stay) */
	low &= ~((uint64_t)page - 1);
	from = *done ? *done : (p->data_off + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	if (low < from + (1u << 20))
		return;
	/* A read-only private mapping of the file: what goes is read again
	 * if touched (a string a DSO kept, say), never lost. */
	if (madvise(p->buf + from, low - from, MADV_DONTNEED) == 0)
		*done = low;
}
