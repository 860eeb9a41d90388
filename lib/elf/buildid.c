/* SPDX-License-Identifier: MIT */
/* Build IDs: parse, format, compare, and read the GNU build-ID note. */
#define _GNU_SOURCE
#include "elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20; /* ASCII lowercase */
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

DS_API int ds_build_id_parse(const char *hex, struct ds_build_id *out)
{
	struct ds_build_id bid = { 0 };
	size_t len;

	if (!hex || !out)
		return -EINVAL;
	len = strnlen(hex, 2 * DS_BUILD_ID_MAX + 1);
	if (len < 2 || len > 2 * DS_BUILD_ID_MAX || len % 2)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		bid.data[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	bid.size = (uint8_t)(len / 2);
	*out = bid;
	return 0;
}

DS_API int ds_build_id_format(const struct ds_build_id *bid, char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	if (!bid || !buf || !bid->size || bid->size > DS_BUILD_ID_MAX)
		return -EINVAL;
	if (len < 2u * bid->size + 1)
		return -ENOSPC;
	for (unsigned i = 0; i < bid->size; i++) {
		buf[2 * i] = digits[bid->data[i] >> 4];
		buf[2 * i + 1] = digits[bid->data[i] & 15];
	}
	buf[2 * bid->size] = 0;
	return 2 * bid->size;
}

DS_API bool ds_build_id_equal(const struct ds_build_id *a, const struct ds_build_id *b)
{
	return a && b && a->size && a->size == b->size && !memcmp(a->data, b->data, a->size);
}

/* Look for NT_GNU_BUILD_ID in one block of notes.  libelf has converted
 * the note headers to host order and checked that each note fits. */
static bool scan_notes(Elf_Data *data, struct ds_build_id *out)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_descsz > 0 && nh.n_descsz <= DS_BUILD_ID_MAX) {
			out->size = (uint8_t)nh.n_descsz;
			memcpy(out->data, (const char *)data->d_buf + desc_off, nh.n_descsz);
			return true;
		}
		off = next;
	}
	return false;
}

/* Program headers first (what the loader and perf read), then SHT_NOTE
 * sections (files with no program headers: .debug files keep the note
 * section but relocatable objects have no segments). */
static int elf_build_id(Elf *elf, struct ds_build_id *out)
{
	bool malformed = false;
	size_t phnum, shnum;
	Elf_Scn *scn = NULL;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &phnum) != 0) {
		malformed = true;
		phnum = 0;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			malformed = true;
			break;
		}
		if (ph.p_type != PT_NOTE || !ph.p_filesz)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!data) {
			malformed = true; /* beyond the end of the file */
			continue;
		}
		if (scan_notes(data, out))
			return 0;
	}
	if (elf_getshdrnum(elf, &shnum) != 0)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh)) {
			malformed = true;
			break;
		}
		if (sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data) {
			malformed = true;
			continue;
		}
		if (scan_notes(data, out))
			return 0;
	}
	return malformed ? -ENOEXEC : -ENODATA;
}

DS_API int ds_build_id_read_fd(int fd, struct ds_build_id *out)
{
	struct ds_build_id bid = { 0 };
	struct stat st;
	Elf *elf;
	int err;

	if (!out)
		return -EINVAL;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	ds__elf_init();
	/* ELF_C_READ, not a map (as dirindex.c's read_file()): libelf
	 * pread()s the headers and the notes only, a file truncated while
	 * it is read gives a short read, not SIGBUS, and no munmap() makes
	 * every other thread of the process flush its TLB.  In `dsostore
	 * serve` each download's build ID is read twice (verified, then
	 * checked as it is served); with a map, those munmap()s' TLB
	 * shootdowns were some 15% of the node's CPU in bench_serve's misses
	 * (70 threads, a VM). */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	err = elf_build_id(elf, &bid);
	elf_end(elf);
	if (!err)
		*out = bid;
	return err;
}

DS_API int ds_build_id_read_file(const char *path, struct ds_build_id *out)
{
	int fd, err;

	if (!path || !out)
		return -EINVAL;
	fd = ds__elf_open_fd(path);
	if (fd < 0)
		return fd;
	err = ds_build_id_read_fd(fd, out);
	close(fd);
	return err;
}

DS_API int ds_build_id_read_mem(const void *buf, size_t len, struct ds_build_id *out)
{
	struct ds_build_id bid = { 0 };
	Elf *elf;
	int err;

	if (!buf || !out)
		return -EINVAL;
	ds__elf_init();
	/* elf_memory() takes a non-const pointer but only reads the image
	 * (fuzz/fuzz_buildid.c runs it over read-only pages to keep us
	 * honest). */
	elf = elf_memory((char *)(uintptr_t)buf, len);
	if (!elf)
		return -ENOEXEC;
	err = elf_build_id(elf, &bid);
	elf_end(elf);
	if (!err)
		*out = bid;
	return err;
}

/* Used by locate: the build ID of an already opened Elf. */
int ds__elf_build_id(Elf *elf, struct ds_build_id *out)
{
	return elf_build_id(elf, out);
}
