/* The saved index's container (lib/symbolize/symfile.c) with hand-made parts, and
 * what surrounds it: the loader's refusals (no file, a symlink, empty,
 * huge, stale, damaged, in a directory others can write, switched off)
 * and `cache clean` of saved indexes.  The blobs are opaque bytes here:
 * what is inside one is symindex.c's, tested through the CLI
 * (tests/cli/symfile.sh).  Expected offsets are worked out by hand from the
 * format's rules (header 168 bytes, 24-byte table entries, parts at
 * multiples of 8), CRCs with zlib directly. */
#define _GNU_SOURCE
#include "testutil.h"

#include "symindex.h"

#include <dirent.h>
#include <dsostore.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
/* The blob sums from libxxhash's own header, not from lib/common/util.c. */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* What the format says a chunk's sum is: XXH3-64's low 32 bits. */
static uint32_t blob_sum(const void *p, size_t n)
{
	return (uint32_t)XXH3_64bits(p, n);
}

/* And a blob's: that sum of the array of its 64 KiB chunks' sums. */
static uint32_t chunked_sum(const void *p, size_t n)
{
	uint32_t sums[64];
	size_t k = 0;

	for (size_t off = 0; off < n; off += 65536) {
		CHECK(k < 64);
		sums[k++] = blob_sum((const char *)p + off, n - off < 65536 ? n - off : 65536);
	}
	return k ? blob_sum(sums, k * sizeof(sums[0])) : 0;
}

#define HDR 168

static const unsigned char elf_bytes[13] = "thirteen byte";
static const unsigned char cu0[5] = { 1, 2, 3, 4, 5 };
static const unsigned char cu2[24] = "twenty-four bytes, CU 2";
static const unsigned char cu3[1] = { 0xff };

static struct ds__blob blobs[4];
static const struct ds__cu_range ranges[3] = {
	{ .lo = 0x1000, .hi = 0x1100, .cu = 0 },
	{ .lo = 0x1100, .hi = 0x1180, .cu = 2 },
	{ .lo = 0x2000, .hi = 0x2001, .cu = 3 },
};
static struct ds__symbols_parts parts;
static struct ds__symfile_key key;

static void make_parts(void)
{
	blobs[0] = (struct ds__blob){ cu0, sizeof(cu0), chunked_sum(cu0, sizeof(cu0)), NULL };
	blobs[1] = (struct ds__blob){ NULL, 0, 0, NULL };
	blobs[2] = (struct ds__blob){ cu2, sizeof(cu2), chunked_sum(cu2, sizeof(cu2)), NULL };
	blobs[3] = (struct ds__blob){ cu3, sizeof(cu3), chunked_sum(cu3, sizeof(cu3)), NULL };
	parts = (struct ds__symbols_parts){
		.elf = { elf_bytes, sizeof(elf_bytes),
			 chunked_sum(elf_bytes, sizeof(elf_bytes)), NULL },
		.ncus = 4,
		.cus = blobs,
		.nranges = 3,
		.ranges = ranges,
	};
	key.bid.size = 20;
	for (int i = 0; i < 20; i++)
		key.bid.data[i] = (uint8_t)(0xa0 + i);
	key.debug_size = 123456;
	key.debug_crc = 0xdeadbeef;
	key.binary_size = 7890;
	key.binary_crc = 0x12345678;
}

/* The container of parts, in an 8-aligned malloc()ed buffer. */
static unsigned char *encode(const struct ds__symbols_parts *p, size_t *len)
{
	char *path = t_path("encoded");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	unsigned char *buf;
	struct stat st;

	CHECK(fd >= 0);
	CHECK_EQ_INT(ds__symfile_write(fd, &key, p), 0);
	CHECK(fstat(fd, &st) == 0);
	*len = (size_t)st.st_size;
	buf = aligned_alloc(8, (*len + 8) & ~(size_t)7);
	CHECK(pread(fd, buf, *len, 0) == (ssize_t)*len);
	close(fd);
	free(path);
	return buf;
}

static uint64_t u64_at(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static uint32_t u32_at(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static void put64(unsigned char *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static void put32(unsigned char *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

/* The header's CRC recomputed here (offset 100; it covers the header with
 * it zeroed and both tables), so that a test can damage a table without
 * being stopped by the checksum. */
static void recrc(unsigned char *b)
{
	uint64_t tables = HDR + 24 * ((uint64_t)u32_at(b, 56) + u32_at(b, 60));
	uLong c;

	put32(b, 100, 0);
	c = crc32(0, b, (uInt)tables);
	put32(b, 100, (uint32_t)c);
}

static int parse(const unsigned char *b, size_t len, const struct ds__symfile_key *k)
{
	struct ds__symbols_parts got;
	struct ds__blob *cus;
	char why[256];
	int err = ds__symfile_parse(b, len, k, &got, &cus, why, sizeof(why));

	free(cus);
	return err;
}

static void test_layout(void)
{
	size_t len, len2;
	unsigned char *b = encode(&parts, &len), *b2;
	struct ds__symbols_parts got;
	struct ds__blob *cus;
	char why[256];

	/* header 168, CU table 4 x 24 = 96, ranges 3 x 24 = 72: ELF blob at
	 * 336, 13 bytes, so CU 0 at 352 (5 bytes) and its one chunk sum at
	 * 360, CU 1 nowhere, CU 2 at 368 (24) and its sum at 392, CU 3 at 400
	 * (1) and its sum at 408: the file ends at 416. */
	CHECK_EQ_INT(len, 416);
	CHECK(!memcmp(b, "DSOSYMIX", 8));
	CHECK_EQ_INT(u32_at(b, 8), 3);
	CHECK_EQ_INT(u32_at(b, 12), 0x01020304);
	CHECK_EQ_INT(b[16], sizeof(void *));
	CHECK_EQ_INT(b[17], 20);
	CHECK_EQ_INT(u64_at(b, 24), 416);
	CHECK_EQ_INT(u64_at(b, 32), 123456);
	CHECK_EQ_INT(u64_at(b, 40), 7890);
	CHECK_EQ_INT(u32_at(b, 48), 0xdeadbeef);
	CHECK_EQ_INT(u32_at(b, 56), 4);
	CHECK_EQ_INT(u32_at(b, 60), 3);
	CHECK_EQ_INT(u64_at(b, 64), HDR);
	CHECK_EQ_INT(u64_at(b, 72), HDR + 96);
	CHECK_EQ_INT(u64_at(b, 80), 336);
	CHECK_EQ_INT(u64_at(b, 88), 13);
	CHECK_EQ_INT(u32_at(b, 96), chunked_sum(elf_bytes, 13));
	CHECK(!memcmp(b + 104, key.bid.data, 20));
	for (int i = 124; i < HDR; i++)
		CHECK_EQ_INT(b[i], 0);
	/* The CU table: offset, size, sum, 0. */
	CHECK_EQ_INT(u64_at(b, HDR + 0), 352);
	CHECK_EQ_INT(u64_at(b, HDR + 24), 0);
	CHECK_EQ_INT(u64_at(b, HDR + 32), 0);
	CHECK_EQ_INT(u64_at(b, HDR + 48), 368);
	CHECK_EQ_INT(u64_at(b, HDR + 72), 400);
	/* A CU's sum: of its chunks' sums, which follow it. */
	CHECK_EQ_INT(u32_at(b, HDR + 48 + 16), chunked_sum(cu2, 24));
	CHECK_EQ_INT(u32_at(b, HDR + 48 + 16), blob_sum(b + 392, 4));
	CHECK(!memcmp(b + HDR + 96, ranges, sizeof(ranges)));
	/* The blobs, their chunks' sums, and zeros between them. */
	CHECK(!memcmp(b + 336, elf_bytes, 13));
	CHECK(!memcmp(b + 352, cu0, 5));
	CHECK_EQ_INT(u32_at(b, 360), blob_sum(cu0, 5));
	CHECK(!memcmp(b + 368, cu2, 24));
	CHECK_EQ_INT(u32_at(b, 392), blob_sum(cu2, 24));
	CHECK_EQ_INT(b[400], 0xff);
	CHECK_EQ_INT(u32_at(b, 408), blob_sum(cu3, 1));
	for (size_t i = 349; i < 352; i++)
		CHECK_EQ_INT(b[i], 0);
	for (size_t i = 357; i < 360; i++)
		CHECK_EQ_INT(b[i], 0);
	for (size_t i = 364; i < 368; i++)
		CHECK_EQ_INT(b[i], 0);
	for (size_t i = 396; i < 400; i++)
		CHECK_EQ_INT(b[i], 0);
	for (size_t i = 401; i < 408; i++)
		CHECK_EQ_INT(b[i], 0);
	for (size_t i = 412; i < 416; i++)
		CHECK_EQ_INT(b[i], 0);
	/* The checksum: of the header with it zeroed, and both tables. */
	{
		uint32_t stored = u32_at(b, 100);

		put32(b, 100, 0);
		CHECK_EQ_INT(stored, crc32(0, b, HDR + 96 + 72));
		put32(b, 100, stored);
	}

	/* Read back: every part where it was written. */
	CHECK_EQ_INT(ds__symfile_parse(b, len, &key, &got, &cus, why, sizeof(why)), 0);
	CHECK_EQ_INT(got.ncus, 4);
	CHECK_EQ_INT(got.nranges, 3);
	CHECK(got.elf.data == b + 336 && got.elf.size == 13 && got.elf.sum == parts.elf.sum);
	CHECK(got.cus[0].data == b + 352 && got.cus[0].size == 5 && got.cus[0].sum == blobs[0].sum);
	CHECK(got.cus[0].chunks == (const void *)(b + 360));
	CHECK(got.cus[1].data == NULL && got.cus[1].size == 0 && got.cus[1].sum == 0 &&
	      !got.cus[1].chunks);
	CHECK(got.cus[2].data == b + 368 && got.cus[3].data == b + 400);
	CHECK(got.cus[2].chunks == (const void *)(b + 392));
	CHECK(got.ranges == (const void *)(b + HDR + 96));
	free(cus);

	/* The same parts from other memory: the same bytes. */
	{
		unsigned char *copy = malloc(sizeof(cu2));
		struct ds__blob other[4];
		struct ds__symbols_parts p2 = parts;

		memcpy(copy, cu2, sizeof(cu2));
		memcpy(other, blobs, sizeof(other));
		other[2].data = copy;
		p2.cus = other;
		b2 = encode(&p2, &len2);
		CHECK(len2 == len && !memcmp(b, b2, len));
		free(copy);
		free(b2);
	}
	/* Without the key: whatever inputs it names. */
	CHECK_EQ_INT(parse(b, len, NULL), 0);
	free(b);
}

static void test_no_cus(void)
{
	struct ds__symbols_parts p = { .elf = parts.elf };
	size_t len;
	unsigned char *b = encode(&p, &len);

	CHECK_EQ_INT(len, HDR + 16); /* 13 bytes at 168, padded */
	CHECK_EQ_INT(parse(b, len, &key), 0);
	free(b);
	p.elf = (struct ds__blob){ 0 };
	b = encode(&p, &len);
	CHECK_EQ_INT(len, HDR);
	CHECK_EQ_INT(parse(b, len, &key), 0);
	free(b);
}

/* Parts the loader would refuse are not written. */
static void test_writer_refuses(void)
{
	struct ds__cu_range bad[2] = { { .lo = 0x2000, .hi = 0x2100 }, { .lo = 0x1000, .hi = 0x1100 } };
	struct ds__symbols_parts p = parts;
	struct ds__blob b[4];
	char *path = t_path("refused");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	free(path);

	p.ranges = bad;
	p.nranges = 2;
	CHECK_EQ_INT(ds__symfile_write(fd, &key, &p), -EINVAL); /* unsorted */
	bad[0].lo = 0x3000;
	bad[1] = (struct ds__cu_range){ .lo = 0x1000, .hi = 0x1100, .cu = 4 };
	p.ranges = &bad[1];
	p.nranges = 1;
	CHECK_EQ_INT(ds__symfile_write(fd, &key, &p), -EINVAL); /* no CU 4 */
	p = parts;
	memcpy(b, blobs, sizeof(b));
	b[1].sum = 1; /* an empty blob with a sum */
	p.cus = b;
	CHECK_EQ_INT(ds__symfile_write(fd, &key, &p), -EINVAL);
	CHECK_EQ_INT(lseek(fd, 0, SEEK_END), 0);
	close(fd);
}

static void test_damage(void)
{
	size_t len;
	unsigned char *b = encode(&parts, &len), *c = aligned_alloc(8, len + 64);
	struct ds__symfile_key k;
	int n;

	/* Cut anywhere: refused. */
	for (size_t cut = 0; cut < len; cut++) {
		memcpy(c, b, cut);
		CHECK_EQ_INT(parse(c, cut, &key), -EBADMSG);
	}
	/* Longer than it says. */
	memcpy(c, b, len);
	memset(c + len, 0, 8);
	CHECK_EQ_INT(parse(c, len + 8, &key), -EBADMSG);
	/* Any bit of the header or the tables flipped: refused (the checksum,
	 * or the field itself).  A blob's bytes are symindex.c's to check
	 * with the blob's CRC, which then no longer matches. */
	n = 0;
	for (size_t i = 0; i < 336 * 8; i++) {
		memcpy(c, b, len);
		c[i / 8] ^= (unsigned char)(1u << (i % 8));
		if (parse(c, len, &key) == 0)
			n++;
	}
	CHECK_EQ_INT(n, 0);
	memcpy(c, b, len);
	c[370] ^= 1;
	CHECK(blob_sum(c + 368, 24) != u32_at(c, 392));
	/* Another machine's file: stale, not damaged. */
	memcpy(c, b, len);
	put32(c, 12, __builtin_bswap32(0x01020304));
	recrc(c);
	CHECK_EQ_INT(parse(c, len, &key), -ESTALE);
	memcpy(c, b, len);
	c[16] = sizeof(void *) == 8 ? 4 : 8;
	recrc(c);
	CHECK_EQ_INT(parse(c, len, &key), -ESTALE);
	memcpy(c, b, len);
	put32(c, 8, 4); /* a later format */
	recrc(c);
	CHECK_EQ_INT(parse(c, len, &key), -ESTALE);
	memcpy(c, b, len);
	put32(c, 8, 2); /* an earlier one (its blobs summed whole) */
	recrc(c);
	CHECK_EQ_INT(parse(c, len, &key), -ESTALE);
	memcpy(c, b, len);
	put32(c, 8, 1); /* and one before (its blob sums were CRC-32s) */
	recrc(c);
	CHECK_EQ_INT(parse(c, len, &key), -ESTALE);
	memcpy(c, b, len);
	put32(c, 20, DS__SYMFILE_BLOB_VERSION + 1);
	recrc(c);
	CHECK_EQ_INT(parse(c, len, &key), -ESTALE);

	/* Tables that lie, with a checksum that agrees: refused. */
	struct {
		size_t off;
		uint64_t val;
		int width;
	} lies[] = {
		{ HDR + 0, 353, 8 }, /* CU 0 not 8-aligned */
		{ HDR + 0, 344, 8 }, /* CU 0 over the ELF blob */
		{ HDR + 0, 0, 8 }, /* CU 0 at 0 */
		{ HDR + 8, 1u << 20, 8 }, /* CU 0 past the end */
		{ HDR + 8, UINT64_MAX, 8 }, /* and wrapping around */
		{ HDR + 56, 0, 8 }, /* CU 2 nowhere, but with its size */
		{ HDR + 24, 352, 8 }, /* an empty CU somewhere */
		{ HDR + 40, 7, 4 }, /* an empty CU with a CRC */
		{ HDR + 20, 1, 4 }, /* padding */
		{ 80, 344, 8 }, /* the ELF blob elsewhere */
		{ 88, 20, 8 }, /* and longer, over CU 0 */
		{ 56, 5, 4 }, /* one CU more than the table has */
		{ 56, 0xffffffff, 4 }, /* far more */
		{ 60, 0x10000000, 4 }, /* ranges past the end */
		{ 64, HDR + 8, 8 }, /* the CU table elsewhere */
		{ 72, HDR + 104, 8 }, /* the ranges elsewhere */
		{ HDR + 96, 0x1101, 8 }, /* range 0 ends before it starts */
		{ HDR + 96, 0x1100, 8 }, /* range 0 empty */
		{ HDR + 96 + 24, 0xfff, 8 }, /* ranges out of order */
		{ HDR + 96 + 16, 4, 4 }, /* range 0 of no CU */
		{ HDR + 96 + 20, 1, 4 }, /* range padding */
		{ 18, HDR + 8, 2 }, /* header size */
		{ 24, 424, 8 }, /* the file size */
		{ HDR + 56, 32, 8 }, /* CU 2 over its chunks' sums */
		{ HDR + 48, 376, 8 }, /* CU 2 a gap after CU 0's sums */
		{ 17, 0, 1 }, /* a build ID of no bytes */
		{ 17, 65, 1 }, /* of too many */
	};
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		memcpy(c, b, len);
		if (lies[i].width == 8)
			put64(c, lies[i].off, lies[i].val);
		else if (lies[i].width == 4)
			put32(c, lies[i].off, (uint32_t)lies[i].val);
		else if (lies[i].width == 2)
			memcpy(c + lies[i].off, &(uint16_t){ (uint16_t)lies[i].val }, 2);
		else
			c[lies[i].off] = (unsigned char)lies[i].val;
		if ((u32_at(c, 56) + (uint64_t)u32_at(c, 60)) * 24 + HDR <= len)
			recrc(c);
		if (parse(c, len, &key) != -EBADMSG) {
			fprintf(stderr, "lie %zu accepted\n", i);
			t_failures++;
		}
	}

	/* Other inputs: stale. */
	k = key;
	k.bid.data[19] ^= 1;
	CHECK_EQ_INT(parse(b, len, &k), -ESTALE);
	k = key;
	k.bid.size = 19;
	CHECK_EQ_INT(parse(b, len, &k), -ESTALE);
	k = key;
	k.debug_size++;
	CHECK_EQ_INT(parse(b, len, &k), -ESTALE);
	k = key;
	k.debug_crc ^= 1;
	CHECK_EQ_INT(parse(b, len, &k), -ESTALE);
	k = key;
	k.binary_size = 0;
	CHECK_EQ_INT(parse(b, len, &k), -ESTALE);
	k = key;
	k.binary_crc ^= 1;
	CHECK_EQ_INT(parse(b, len, &k), -ESTALE);
	/* Not where a mapping would be. */
	memcpy(c + 4, b, len);
	CHECK_EQ_INT(parse(c + 4, len, &key), -EINVAL);
	free(b);
	free(c);
}

/* ---- the loader on files */

static char *index_dir;

static struct ds_context *context(int mode)
{
	DS_OPTS(ds_context_opts, o, .perf_buildid_dir = "", .urls = "",
		.cache_path = t_path("dcache"), .symindex = mode, .symindex_path = index_dir);
	struct ds_context *ctx = ds_context_new(&o);

	free((char *)o.cache_path);
	if (!ctx) {
		perror("ds_context_new");
		exit(2);
	}
	return ctx;
}

static void write_bytes(const char *path, const void *b, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, b, len) == (ssize_t)len);
	close(fd);
}

static int load(struct ds_context *ctx, const struct ds__symfile_key *k)
{
	struct ds_debuginfo di;
	struct ds_symbols *S = (void *)1;
	int err;

	ds__debuginfo_init(&di, &key.bid);
	di.source = DS_SOURCE_BUILD_ID_DIR;
	atomic_store(&di.path, (char *)"/nonexistent/debuginfo");
	err = ds__symfile_load(ctx, &di, k, NULL, &S);
	if (err)
		CHECK(S == NULL);
	else
		ds__symbols_free(S);
	return err;
}

static void test_load(void)
{
	char hex[2 * DS_BUILD_ID_MAX + 1], *file, *target;
	struct ds_context *ctx, *off;
	size_t len;
	unsigned char *b = encode(&parts, &len);
	int err;

	index_dir = t_path("index");
	ds_build_id_format(&key.bid, hex, sizeof(hex));
	file = t_path("index/%s", hex);
	target = t_path("elsewhere");
	ctx = context(0);
	CHECK_EQ_INT(load(ctx, &key), -ENOENT); /* no directory yet */
	CHECK(mkdir(index_dir, 0700) == 0);
	CHECK_EQ_INT(load(ctx, &key), -ENOENT);

	/* A good container: past every check of ours, to the index, which
	 * refuses these blobs (or, before the saved index exists there,
	 * cannot take any): nothing leaks, nothing is kept. */
	write_bytes(file, b, len);
	err = load(ctx, &key);
	CHECK(err == -EINVAL || err == -ENOSYS || err == -EBADMSG);
	/* Stale, empty, damaged, not a file. */
	{
		struct ds__symfile_key k = key;

		k.debug_size++;
		CHECK_EQ_INT(load(ctx, &k), -ESTALE);
	}
	write_bytes(file, b, 0);
	CHECK_EQ_INT(load(ctx, &key), -EBADMSG);
	write_bytes(file, b, len - 1);
	CHECK_EQ_INT(load(ctx, &key), -EBADMSG);
	unlink(file);
	CHECK(mkdir(file, 0700) == 0);
	CHECK_EQ_INT(load(ctx, &key), -EBADMSG);
	rmdir(file);
	/* Huge (sparse): refused before it is mapped. */
	{
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		CHECK(fd >= 0);
		if (ftruncate(fd, ((off_t)1 << 36) + 1) == 0)
			CHECK_EQ_INT(load(ctx, &key), -EBADMSG);
		close(fd);
		unlink(file);
	}
	/* A symlink to a good file: not followed. */
	write_bytes(target, b, len);
	CHECK(symlink(target, file) == 0);
	CHECK_EQ_INT(load(ctx, &key), -ELOOP);
	unlink(file);
	/* Switched off: not even looked for. */
	write_bytes(file, b, len);
	off = context(-1);
	CHECK_EQ_INT(load(off, &key), -ENOTSUP);
	ds_context_free(off);
	setenv("DSOSTORE_SYMINDEX", "0", 1);
	off = context(0);
	CHECK_EQ_INT(load(off, &key), -ENOTSUP);
	ds_context_free(off);
	off = context(1); /* the option wins */
	CHECK(load(off, &key) != -ENOTSUP);
	ds_context_free(off);
	unsetenv("DSOSTORE_SYMINDEX");
	/* A directory others may write: not used. */
	CHECK(chmod(index_dir, 0777) == 0);
	CHECK_EQ_INT(load(ctx, &key), -EACCES);
	CHECK(chmod(index_dir, 0700) == 0);
	ds_context_free(ctx);
	free(file);
	free(target);
	free(b);
}

/* ---- cache clean */

static void age(const char *path, int64_t days)
{
	struct timespec ts[2] = { { .tv_sec = time(NULL) - days * 86400 },
				  { .tv_sec = time(NULL) - days * 86400 } };

	CHECK(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == 0);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void test_clean(void)
{
	const char *old_hex = "00112233445566778899aabbccddeeff00112233";
	const char *new_hex = "ffeeddccbbaa99887766554433221100ffeeddcc";
	char *old_f = t_path("index/%s", old_hex), *new_f = t_path("index/%s", new_hex);
	char *tmp_old = t_path("index/%s.abc123", new_hex), *tmp_new = t_path("index/%s.xyz789", old_hex);
	char *other = t_path("index/README"), *victim = t_path("victim");
	char *link = t_path("index/0123456789abcdef0123456789abcdef01234567");
	char *entry = t_path("dcache/%s", old_hex), *in_entry = t_path("dcache/%s/dsostore-index", old_hex);
	char *fresh_entry = t_path("dcache/%s/dsostore-index", new_hex);
	struct ds_context *ctx = context(0);

	t_write_file(old_f, "old");
	age(old_f, 8); /* max_unused_age_s is 7 days */
	t_write_file(new_f, "new");
	age(new_f, 6);
	t_write_file(tmp_old, "a writer that died");
	chmod(tmp_old, 0600);
	age(tmp_old, 1);
	t_write_file(tmp_new, "a writer at work");
	chmod(tmp_new, 0600);
	t_write_file(other, "not ours");
	age(other, 30);
	t_write_file(victim, "outside");
	age(victim, 30);
	CHECK(symlink(victim, link) == 0);
	age(link, 30);
	t_mkdir_parents(in_entry);
	t_mkdir_parents(fresh_entry);
	{
		char *root = t_path("dcache");

		chmod(root, 0700);
		free(root);
	}
	t_write_file(in_entry, "old, in its entry");
	age(in_entry, 8);
	t_write_file(fresh_entry, "fresh, in its entry");
	CHECK(ds_cache_clean(ctx, true) >= 3);
	CHECK(!exists(old_f));
	CHECK(exists(new_f));
	CHECK(!exists(tmp_old));
	CHECK(exists(tmp_new));
	CHECK(exists(other));
	CHECK(exists(link) && exists(victim));
	CHECK(!exists(in_entry) && !exists(entry)); /* the empty entry goes too */
	CHECK(exists(fresh_entry));
	ds_context_free(ctx);
	free(old_f);
	free(new_f);
	free(tmp_old);
	free(tmp_new);
	free(other);
	free(victim);
	free(link);
	free(entry);
	free(in_entry);
	free(fresh_entry);
}

/* ---- through the store: a batch that completes the index saves it, the
 * next store maps it and reads no DWARF, and answers the same */

static size_t function_addrs(const char *prog, uint64_t *out, size_t max)
{
	FILE *f = t_popen("nm '%s'", prog);
	char line[512];
	size_t n = 0;

	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type;

		if (sscanf(line, "%llx %c", &a, &type) == 2 && (type == 'T' || type == 't')) {
			out[n++] = a;
			if (n < max)
				out[n++] = a + 4;
		}
	}
	pclose(f);
	return n;
}

/* (The answers stay the batch's after the store is gone.) */
static struct ds_store_stats batch(struct ds_context *ctx, const char *prog, const uint64_t *addrs,
				   size_t n, struct ds_sym_batch *res)
{
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *dso = ds_store_findnew(s, prog, NULL);
	struct ds_store_stats st;

	CHECK(dso != NULL);
	CHECK(ds_dso_symbolize_batch(dso, addrs, n, DS_SYM_INLINES, res) > 0);
	ds_store_flush(s); /* the index completed is saved by the store's thread */
	ds_store_stats(s, &st);
	ds_dso_put(dso);
	ds_store_free(s);
	return st;
}

static void test_store(void)
{
	char *a = t_path("sa.c"), *b = t_path("sb.c"), *prog = t_path("sprog");
	char *nodebug = t_path("nodebug"), *file, hex[2 * DS_BUILD_ID_MAX + 1];
	const char *dirs[2] = { nodebug, NULL };
	struct ds_sym_batch *r1 = ds_sym_batch_new(), *r2 = ds_sym_batch_new();
	struct ds_store_stats st;
	struct ds_build_id bid;
	uint64_t addrs[64];
	size_t n, n1, n2;

	t_write_file(a, "int other(int);\n"
			"__attribute__((noinline)) int work(int n) { return n * 3 + other(n); }\n"
			"int main(int c, char **v) { (void)v; return work(c); }\n");
	t_write_file(b, "__attribute__((noinline)) int other(int x) { return x ^ 5; }\n");
	if (t_sh("cc -g -O2 -o '%s' '%s' '%s'", prog, a, b) != 0) {
		fprintf(stderr, "no compiler: store part skipped\n");
		goto out;
	}
	mkdir(nodebug, 0700);
	CHECK_EQ_INT(ds_build_id_read_file(prog, &bid), 0);
	ds_build_id_format(&bid, hex, sizeof(hex));
	index_dir = t_path("sindex");
	file = t_path("sindex/%s", hex);
	n = function_addrs(prog, addrs, 64);
	CHECK(n >= 6);
	{
		/* The host cancelled (ds_context_opts.cancel, a signal handler's
		 * flag): the answers are made, the index is not saved, and no
		 * temporary file is left in its directory. */
		static volatile int cancelled = 1;
		DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = "",
			.symindex_path = index_dir, .cancel = &cancelled);
		struct ds_context *ctx = ds_context_new(&o);
		struct dirent *de;
		DIR *d;

		st = batch(ctx, prog, addrs, n, r1);
		CHECK_EQ_INT(st.dwarf_builds, 1);
		CHECK_EQ_INT(st.symindex_saves, 0);
		CHECK(access(file, F_OK) != 0);
		if ((d = opendir(index_dir))) {
			while ((de = readdir(d)))
				CHECK(!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."));
			closedir(d);
		}
		ds_context_free(ctx);
	}
	{
		DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = "",
			.symindex_path = index_dir);
		struct ds_context *ctx = ds_context_new(&o);

		st = batch(ctx, prog, addrs, n, r1);
		CHECK_EQ_INT(st.dwarf_builds, 1);
		CHECK_EQ_INT(st.symindex_loads, 0);
		CHECK_EQ_INT(st.symindex_saves, 1);
		CHECK(access(file, F_OK) == 0);
		st = batch(ctx, prog, addrs, n, r2);
		CHECK_EQ_INT(st.dwarf_builds, 0);
		CHECK_EQ_INT(st.units_built, 0);
		CHECK_EQ_INT(st.symindex_loads, 1);
		CHECK_EQ_INT(st.symindex_saves, 0);
		const struct ds_sym_answer *a1 = ds_sym_batch_answers(r1, &n1),
					   *a2 = ds_sym_batch_answers(r2, &n2);

		CHECK_EQ_INT(n1, n);
		CHECK_EQ_INT(n2, n);
		for (size_t i = 0; i < n && i < n1 && i < n2; i++) {
			CHECK_EQ_INT(a1[i].nframes, a2[i].nframes);
			for (size_t f = 0; f < a1[i].nframes && f < a2[i].nframes; f++) {
				const struct ds_frame *x = &a1[i].frames[f], *y = &a2[i].frames[f];

				CHECK(x->line == y->line && x->inlined == y->inlined);
				CHECK(!x->function == !y->function &&
				      (!x->function || !strcmp(x->function, y->function)));
				CHECK(!x->file == !y->file && (!x->file || !strcmp(x->file, y->file)));
			}
		}
		ds_context_free(ctx);
	}
	{
		DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = "",
			.symindex_path = index_dir, .symindex = -1);
		struct ds_context *ctx = ds_context_new(&o);

		st = batch(ctx, prog, addrs, n, r1);
		CHECK_EQ_INT(st.dwarf_builds, 1);
		CHECK_EQ_INT(st.symindex_loads, 0);
		CHECK_EQ_INT(st.symindex_saves, 0);
		ds_context_free(ctx);
	}
	free(file);
out:
	ds_sym_batch_free(r1);
	ds_sym_batch_free(r2);
	free(a);
	free(b);
	free(prog);
	free(nodebug);
}

int main(void)
{
	make_parts();
	test_layout();
	test_no_cus();
	test_writer_refuses();
	test_damage();
	test_load();
	test_clean();
	free(index_dir);
	test_store();
	free(index_dir);
	return t_done("test_symfile");
}
