/* SPDX-License-Identifier: MIT */
/* ELF facts the lookup needs: debug sections, code, .gnu_debuglink. */
#define _GNU_SOURCE
#include "internal.h"

#include <byteswap.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_init_once(void)
{
	elf_version(EV_CURRENT);
}

void ds__elf_init(void)
{
	pthread_once(&elf_once, elf_init_once);
}

int ds__elf_open_fd(const char *path)
{
	struct stat st;
	int fd;

	/* O_NONBLOCK: a FIFO must not hang the open; cleared for files. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	}
	fcntl(fd, F_SETFL, 0);
	return fd;
}

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

int ds__file_crc32(int fd, uint32_t *crc_out)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	*crc_out = (uint32_t)crc;
	return 0;
}
