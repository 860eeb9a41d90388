/* SPDX-License-Identifier: MIT */
/* ELF facts the lookup needs: debug sections, code, .gnu_debuglink. */
#define _GNU_SOURCE
#include "elfinfo.h"

#include <byteswap.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static void read_debuglink(Elf *elf, Elf_Scn *scn, struct ds_elf_info *info)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const GElf_Ehdr *eh;
	GElf_Ehdr ehdr;
	size_t namelen, crc_off;
	uint32_t crc;

	if (!data || !data->d_buf || !(eh = gelf_getehdr(elf, &ehdr)))
		return;
	/* File name, NUL, padding to 4, then the CRC in the file's order. */
	namelen = strnlen(data->d_buf, data->d_size);
	if (namelen == 0 || namelen >= sizeof(info->debuglink) || namelen == data->d_size)
		return;
	crc_off = (namelen + 1 + 3) & ~(size_t)3;
	if (crc_off + 4 > data->d_size)
		return;
	memcpy(&crc, (const char *)data->d_buf + crc_off, 4);
	if ((eh->e_ident[EI_DATA] == ELFDATA2MSB) != (__BYTE_ORDER == __BIG_ENDIAN))
		crc = bswap_32(crc);
	/* A debuglink naming a path, not a file name, is not followed. */
	if (memchr(data->d_buf, '/', namelen))
		return;
	memcpy(info->debuglink, data->d_buf, namelen);
	info->debuglink[namelen] = 0;
	info->debuglink_crc = crc;
	info->has_debuglink = true;
}

static void inspect_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
			    struct ds_elf_info *info)
{
	bool has_bytes = sh->sh_type != SHT_NOBITS && sh->sh_size > 0;

	if (has_bytes && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
		info->has_debug_info = true;
	else if (has_bytes && (sh->sh_flags & SHF_EXECINSTR))
		info->has_code = true;
	else if (sh->sh_type != SHT_NOBITS && !strcmp(name, ".gnu_debuglink"))
		read_debuglink(elf, scn, info);
}

int ds__elf_inspect(Elf *elf, struct ds_elf_info *info)
{
	size_t shstrndx, phnum;
	Elf_Scn *scn = NULL;
	bool have_sections = false;

	memset(info, 0, sizeof(*info));
	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				return -ENOEXEC;
			have_sections = true;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name)
				inspect_section(elf, scn, &sh, name, info);
		}
	}
	/* Without section headers (sstrip'd), code is whatever an executable
	 * segment brings from the file. */
	if (!have_sections && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X) && ph.p_filesz > 0)
				info->has_code = true;
		}
	}
	return 0;
}

/* How much a compressed debug section may say it holds: DEBUG_INFLATE_RATIO
 * times its compressed bytes, and at least DEBUG_INFLATE_FLOOR.  Debian's
 * debuginfo compresses 2 to 8 times (every section of the 166 files of
 * /usr/lib/debug here, recompressed with zlib and with zstd: .debug_abbrev
 * the most, 8.2); libelf only refuses over 1032 (zlib's limit), which a
 * 4 MB stream of zeros claiming 4 GiB passes: 4 GiB allocated and
 * written.  The floor is for tiny sections, where a header's bytes skew
 * the ratio and nothing large is at stake. */
#define DEBUG_INFLATE_RATIO 64
#define DEBUG_INFLATE_FLOOR (1u << 20)

bool ds__elf_inflate_plausible(uint64_t packed, uint64_t claimed)
{
	uint64_t limit = packed > UINT64_MAX / DEBUG_INFLATE_RATIO ? UINT64_MAX
								   : packed * DEBUG_INFLATE_RATIO;

	return claimed <= (limit > DEBUG_INFLATE_FLOOR ? limit : DEBUG_INFLATE_FLOOR);
}

static const char *compression_name(uint32_t type)
{
	switch (type) {
	case ELFCOMPRESS_ZLIB:
		return "zlib";
	case 2: /* ELFCOMPRESS_ZSTD: not in elfutils 0.188's elf.h */
		return "zstd";
	default:
		return "unknown";
	}
}

bool ds__elf_packed(Elf *elf, Elf_Scn *scn, const char *name, struct ds_elf_packed *out)
{
	GElf_Shdr shdr, *sh = gelf_getshdr(scn, &shdr);
	Elf_Data *raw;
	const unsigned char *p;

	memset(out, 0, sizeof(*out));
	if (!sh || (!(sh->sh_flags & SHF_COMPRESSED) && strncmp(name, ".zdebug_", 8)))
		return false;
	/* (elf_rawdata() before gelf_getchdr(), which reads the data itself:
	 * the other way round libelf refuses the raw data.) */
	raw = elf_rawdata(scn, NULL);
	if (!raw || !raw->d_buf)
		return false;
	p = raw->d_buf;
	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;
		size_t hdr = gelf_getclass(elf) == ELFCLASS64 ? sizeof(Elf64_Chdr)
							       : sizeof(Elf32_Chdr);

		if (!gelf_getchdr(scn, &ch) || raw->d_size < hdr)
			return false; /* libelf will not decompress it either */
		out->type = ch.ch_type;
		out->size = ch.ch_size;
		out->packed = sh->sh_size;
		out->src = p + hdr;
		out->src_size = raw->d_size - hdr;
		out->how = compression_name(ch.ch_type);
		return true;
	}
	if (raw->d_size < 12 || memcmp(p, "ZLIB", 4))
		return false; /* not GNU-compressed: read as it is */
	for (int i = 4; i < 12; i++)
		out->size = out->size << 8 | p[i];
	out->type = ELFCOMPRESS_ZLIB;
	out->packed = raw->d_size;
	out->src = p + 12;
	out->src_size = raw->d_size - 12;
	out->how = "zlib-gnu";
	return true;
}

/* One section as a reader would decompress it (gABI SHF_COMPRESSED, or
 * GNU .zdebug_*): its claim within the ratio. */
static bool compressed_ok(Elf *elf, Elf_Scn *scn, const char *name, char *msg, size_t msglen)
{
	struct ds_elf_packed pk;

	if (!ds__elf_packed(elf, scn, name, &pk) || ds__elf_inflate_plausible(pk.packed, pk.size))
		return true;
	snprintf(msg, msglen,
		 "%s: %llu bytes of %s that claim %llu decompressed, over %u times as many: "
		 "not decompressed",
		 name, (unsigned long long)pk.packed, pk.how, (unsigned long long)pk.size,
		 DEBUG_INFLATE_RATIO);
	return false;
}

bool ds__elf_altlink(Elf *elf, const char **name, struct ds_build_id *bid)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sn;
		Elf_Data *d;
		const char *p, *nul;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sn = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(sn, ".gnu_debugaltlink") || !(d = elf_rawdata(scn, NULL)) || !d->d_buf)
			continue;
		p = d->d_buf;
		nul = memchr(p, 0, d->d_size);
		if (!nul)
			return false;
		n = d->d_size - (size_t)(nul + 1 - p);
		if (!n || n > DS_BUILD_ID_MAX)
			return false;
		*name = p;
		bid->size = (uint8_t)n;
		memcpy(bid->data, nul + 1, n);
		return true;
	}
	return false;
}

int ds__elf_file_altlink(const char *path, char *name, size_t len, struct ds_build_id *bid)
{
	int fd = ds__elf_open_fd(path), err = -ENODATA;
	const char *n;
	Elf *elf;

	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && ds__elf_altlink(elf, &n, bid))
		err = snprintf(name, len, "%s", n) < (int)len ? 0 : -ENAMETOOLONG;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int ds__elf_check_compressed(Elf *elf, char *msg, size_t msglen)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		if (!compressed_ok(elf, scn, name, msg, msglen))
			return -EFBIG;
	}
	return 0;
}

/* zlib's CRC-32 of crc's bytes followed by n zero bytes, without the
 * zeros: the CRC of 2^k zeros by doubling, combined in (O(log n)
 * crc32_combine() steps).  Steps of at most 2^30 bytes keep every length
 * within a 32-bit z_off_t. */
static uLong crc32_zeros(uLong crc, uint64_t n)
{
	static const unsigned char zero[1];

	while (n) {
		uint64_t step = n < (1u << 30) ? n : (1u << 30), left = step;
		uLong sum = crc32(0L, Z_NULL, 0), pow = crc32(0L, zero, 1);
		z_off_t len = 1;

		while (left) {
			if (left & 1)
				sum = crc32_combine(sum, pow, len);
			left >>= 1;
			if (left) {
				pow = crc32_combine(pow, pow, len);
				len *= 2;
			}
		}
		crc = crc32_combine(crc, sum, (z_off_t)step);
		n -= step;
	}
	return crc;
}

/* Holes (SEEK_DATA/SEEK_HOLE) are summed as zeros, not read: a sparse
 * debuginfo of 4 GiB and a few KB on disk costs what is on disk.  Where
 * the filesystem cannot say, everything is data. */
int ds__file_crc32(int fd, uint32_t *crc_out)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	struct stat st;
	off_t off = 0, data, end;
	ssize_t n;

	if (fstat(fd, &st) != 0)
		return -errno;
	while (off < st.st_size) {
		data = lseek(fd, off, SEEK_DATA);
		if (data < 0)
			data = errno == ENXIO ? st.st_size : off; /* a hole to the end; no answer */
		if (data > st.st_size)
			data = st.st_size;
		crc = crc32_zeros(crc, (uint64_t)(data - off));
		off = data;
		end = off < st.st_size ? lseek(fd, off, SEEK_HOLE) : off;
		if (end <= off || end > st.st_size)
			end = st.st_size;
		while (off < end) {
			size_t want = end - off < (off_t)sizeof(buf) ? (size_t)(end - off) : sizeof(buf);

			n = pread(fd, buf, want, off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				goto out; /* shorter than fstat said: what was there */
			crc = crc32(crc, buf, (uInt)n);
			off += n;
		}
	}
out:
	*crc_out = (uint32_t)crc;
	return 0;
}

/* ---- is the file a whole ELF?
 *
 * A download (or a cache entry) is only an ELF file if everything its
 * headers promise lies inside it: a valid HTTP answer carrying the first
 * half of the right file passes the build-ID check (the note is near the
 * start) and would poison the cache.  This reads the raw headers with
 * pread(), not libelf, so it also works on the prefix of a file still
 * being downloaded: the answer may be "need N bytes to tell".
 */

struct raw_ehdr {
	bool is64, swap;
	uint16_t type, phentsize, phnum, shentsize, shstrndx;
	uint64_t phoff, shoff, shnum;
	unsigned ehsize;
};

static uint16_t rd16(const unsigned char *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swap ? bswap_16(v) : v;
}

static uint32_t rd32(const unsigned char *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? bswap_32(v) : v;
}

static uint64_t rd64(const unsigned char *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return swap ? bswap_64(v) : v;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOEXEC; /* the file is shorter than it was */
		done += (size_t)n;
	}
	return 0;
}

/* Where an ELF's bytes are read from: a file, or memory (a download
 * still whole in its spool, fetch.c). */
struct elf_src {
	int fd; /* (mem NULL) */
	const unsigned char *mem;
	uint64_t size; /* of mem */
};

static int src_read(const struct elf_src *s, void *buf, size_t len, uint64_t off)
{
	if (!s->mem)
		return pread_all(s->fd, buf, len, off);
	if (off > s->size || len > s->size - off)
		return -ENOEXEC; /* (as a file shorter than its headers say) */
	memcpy(buf, s->mem + off, len);
	return 0;
}

static int read_ehdr(const struct elf_src *s, uint64_t avail, struct raw_ehdr *h,
		     uint64_t *need, const char **why)
{
	unsigned char b[64];
	bool msb;
	int err;

	if (avail < 16) {
		*need = 16;
		return -EAGAIN;
	}
	if ((err = src_read(s, b, 16, 0)))
		return err;
	if (memcmp(b, ELFMAG, SELFMAG) != 0 || (b[EI_CLASS] != ELFCLASS32 && b[EI_CLASS] != ELFCLASS64) ||
	    (b[EI_DATA] != ELFDATA2LSB && b[EI_DATA] != ELFDATA2MSB) || b[EI_VERSION] != EV_CURRENT) {
		*why = "not an ELF file";
		return -ENOEXEC;
	}
	h->is64 = b[EI_CLASS] == ELFCLASS64;
	h->ehsize = h->is64 ? 64 : 52;
	msb = b[EI_DATA] == ELFDATA2MSB;
	h->swap = msb != (__BYTE_ORDER == __BIG_ENDIAN);
	if (avail < h->ehsize) {
		*need = h->ehsize;
		return -EAGAIN;
	}
	if ((err = src_read(s, b, h->ehsize, 0)))
		return err;
	h->type = rd16(b + 16, h->swap);
	if (h->is64) {
		h->phoff = rd64(b + 32, h->swap);
		h->shoff = rd64(b + 40, h->swap);
		h->phentsize = rd16(b + 54, h->swap);
		h->phnum = rd16(b + 56, h->swap);
		h->shentsize = rd16(b + 58, h->swap);
		h->shnum = rd16(b + 60, h->swap);
		h->shstrndx = rd16(b + 62, h->swap);
	} else {
		h->phoff = rd32(b + 28, h->swap);
		h->shoff = rd32(b + 32, h->swap);
		h->phentsize = rd16(b + 42, h->swap);
		h->phnum = rd16(b + 44, h->swap);
		h->shentsize = rd16(b + 46, h->swap);
		h->shnum = rd16(b + 48, h->swap);
		h->shstrndx = rd16(b + 50, h->swap);
	}
	if ((h->phnum && h->phentsize < (h->is64 ? 56 : 32)) ||
	    ((h->shnum || h->shoff) && h->shentsize < (h->is64 ? 64 : 40))) {
		*why = "ELF header gives impossible table entry sizes";
		return -ENOEXEC;
	}
	return 0;
}

/* end = off + len, or -ENOEXEC when it wraps. */
static int span_end(uint64_t off, uint64_t len, uint64_t *end)
{
	if (off > UINT64_MAX - len)
		return -ENOEXEC;
	*end = off + len;
	return 0;
}

static int extent_of(const struct elf_src *s, uint64_t avail, bool segments, uint64_t *extent,
		     const char **why)
{
	unsigned char buf[16384]; /* table entries, read a chunk at once */
	uint64_t end, ext, need = 0, shnum, phnum;
	struct raw_ehdr h;
	int err;

	*why = NULL;
	err = read_ehdr(s, avail, &h, &need, why);
	if (err == -EAGAIN)
		*extent = need;
	if (err)
		return err;
	ext = h.ehsize;
	shnum = h.shnum;
	phnum = h.phnum;

	/* Extended numbering: the real counts live in section 0. */
	if (h.shoff && (shnum == 0 || phnum == PN_XNUM)) {
		unsigned char s0[64];

		if (span_end(h.shoff, h.shentsize, &end)) {
			*why = "section header table outside the file";
			return -ENOEXEC;
		}
		if (end > avail) {
			*extent = end;
			return -EAGAIN;
		}
		if ((err = src_read(s, s0, h.is64 ? 64 : 40, h.shoff)))
			return err;
		if (shnum == 0)
			shnum = h.is64 ? rd64(s0 + 32, h.swap) : rd32(s0 + 20, h.swap);
		if (phnum == PN_XNUM)
			phnum = rd32(s0 + (h.is64 ? 44 : 28), h.swap);
	}
	if (shnum > (1u << 24) || phnum > (1u << 20)) {
		*why = "ELF header claims an absurd number of sections or segments";
		return -ENOEXEC;
	}

	/* The tables themselves. */
	if (phnum) {
		if (span_end(h.phoff, phnum * h.phentsize, &end)) {
			*why = "program header table outside the file";
			return -ENOEXEC;
		}
		ext = end > ext ? end : ext;
	}
	if (shnum) {
		if (span_end(h.shoff, shnum * h.shentsize, &end)) {
			*why = "section header table outside the file";
			return -ENOEXEC;
		}
		ext = end > ext ? end : ext;
	}
	if (ext > avail) {
		*extent = ext;
		return -EAGAIN;
	}

	/* Every section with file bytes. */
	for (uint64_t i = 0; i < shnum;) {
		uint64_t n = sizeof(buf) / h.shentsize;

		n = shnum - i < n ? shnum - i : n;
		if ((err = src_read(s, buf, n * h.shentsize, h.shoff + i * h.shentsize)))
			return err;
		for (uint64_t k = 0; k < n; k++, i++) {
			const unsigned char *sh = buf + k * h.shentsize;
			uint32_t type = rd32(sh + 4, h.swap);
			uint64_t off = h.is64 ? rd64(sh + 24, h.swap) : rd32(sh + 16, h.swap);
			uint64_t size = h.is64 ? rd64(sh + 32, h.swap) : rd32(sh + 20, h.swap);

			if (i == 0 || type == SHT_NOBITS || type == SHT_NULL || !size)
				continue;
			if (span_end(off, size, &end)) {
				*why = "a section lies outside the file";
				return -ENOEXEC;
			}
			ext = end > ext ? end : ext;
		}
	}

	/* Segments: only for a file meant to be loaded.  A separate
	 * debuginfo keeps the binary's program headers, and eu-strip -f
	 * (Fedora's debuginfo, much of what debuginfod serves) keeps their
	 * p_offset and p_filesz too, pointing past its own end: there they
	 * describe the executable, not this file. */
	for (uint64_t i = 0; segments && i < phnum; i++) {
		size_t esz = h.is64 ? 56 : 32;
		uint64_t off, filesz;

		if ((err = src_read(s, buf, esz, h.phoff + i * h.phentsize)))
			return err;
		off = h.is64 ? rd64(buf + 8, h.swap) : rd32(buf + 4, h.swap);
		filesz = h.is64 ? rd64(buf + 32, h.swap) : rd32(buf + 16, h.swap);
		if (!filesz)
			continue;
		if (span_end(off, filesz, &end)) {
			*why = "a segment lies outside the file";
			return -ENOEXEC;
		}
		ext = end > ext ? end : ext;
	}
	*extent = ext;
	return ext > avail ? -EAGAIN : 0;
}

int ds__elf_extent(int fd, uint64_t avail, bool segments, uint64_t *extent, const char **why)
{
	return extent_of(&(struct elf_src){ .fd = fd }, avail, segments, extent, why);
}

static int check_whole(const struct elf_src *s, uint64_t size, bool segments, const char **why)
{
	uint64_t extent;
	int err = extent_of(s, size, segments, &extent, why);

	if (err == -EAGAIN) {
		*why = "truncated: its headers reach past the end of the file";
		return -ENOEXEC;
	}
	if (err) {
		if (!*why)
			*why = ds_strerror(err);
		return err;
	}
	if (size > extent + DS_ELF_SLACK) {
		*why = "more bytes than the ELF it holds (padded)";
		return -ENOEXEC;
	}
	return 0;
}

int ds__elf_check_whole(int fd, uint64_t size, bool segments, const char **why)
{
	return check_whole(&(struct elf_src){ .fd = fd }, size, segments, why);
}

static const char *artifact_bad(const struct elf_src *s, uint64_t size,
				const struct ds_build_id *bid, enum ds_artifact what, char *buf,
				size_t len)
{
	struct ds_build_id got;
	const char *why = NULL;
	int err;

	if (what != DS_ARTIFACT_DEBUGINFO && what != DS_ARTIFACT_EXECUTABLE)
		return NULL;
	err = s->mem ? ds_build_id_read_mem(s->mem, s->size, &got) : ds_build_id_read_fd(s->fd, &got);
	if (err) {
		snprintf(buf, len, "not a valid ELF with a build ID (%s)", ds_strerror(err));
		return buf;
	}
	if (!ds_build_id_equal(&got, bid)) {
		char hex[2 * DS_BUILD_ID_MAX + 1];

		ds_build_id_format(&got, hex, sizeof(hex));
		snprintf(buf, len, "a file with build ID %s", hex);
		return buf;
	}
	if (check_whole(s, size, what == DS_ARTIFACT_EXECUTABLE, &why)) {
		snprintf(buf, len, "not a whole ELF (%s)", why);
		return buf;
	}
	return NULL;
}

const char *ds__elf_artifact_bad(int fd, uint64_t size, const struct ds_build_id *bid,
				 enum ds_artifact what, char *buf, size_t len)
{
	return artifact_bad(&(struct elf_src){ .fd = fd }, size, bid, what, buf, len);
}

const char *ds__elf_artifact_bad_mem(const void *p, uint64_t size, const struct ds_build_id *bid,
				     enum ds_artifact what, char *buf, size_t len)
{
	return artifact_bad(&(struct elf_src){ .fd = -1, .mem = p, .size = size }, size, bid, what,
			    buf, len);
}

/* The bytes a debuginfod server sends for /section/NAME: elfutils'
 * debuginfod sends elf_rawdata(), so a compressed section goes as it is
 * in the file; here only where those bytes are.  libelf is not trusted
 * to have checked the tables against the file's size (a mapped file past
 * its end is SIGBUS to whoever reads it), so both are checked here. */
int ds__elf_section_find(int fd, const char *name, uint64_t *offset, uint64_t *size)
{
	size_t shstrndx, shnum;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	struct stat st;
	uint64_t fsize, end, count;
	int err = -ENOENT;
	Elf *elf;

	if (fd < 0 || !name || !offset || !size)
		return -EINVAL;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	fsize = (uint64_t)st.st_size;
	ds__elf_init();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getshdrnum(elf, &shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		err = -ENOEXEC;
		goto out;
	}
	/* The section header table inside the file, as its header counts it:
	 * libelf counts none of a table cut short.  (e_shnum 0 with a table:
	 * the count is in section 0, which must be there.) */
	count = eh.e_shnum ? eh.e_shnum : eh.e_shoff ? 1 : 0;
	count = shnum > count ? shnum : count;
	if (count && (span_end(eh.e_shoff, count * eh.e_shentsize, &end) || end > fsize)) {
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh)) {
			err = -ENOEXEC;
			goto out;
		}
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, name))
			continue;
		if (sh.sh_type == SHT_NOBITS) {
			err = -ENODATA; /* there, but no bytes in the file to send */
			break;
		}
		if (span_end(sh.sh_offset, sh.sh_size, &end) || end > fsize) {
			err = -ENOEXEC;
			goto out;
		}
		*offset = sh.sh_offset;
		*size = sh.sh_size;
		err = 0;
		break;
	}
out:
	elf_end(elf);
	return err;
}

DS_API int ds_elf_section_range(int fd, const char *name, uint64_t *offset, uint64_t *size)
{
	int err = ds__elf_section_find(fd, name, offset, size);

	return err == -ENODATA ? -ENOENT : err;
}
