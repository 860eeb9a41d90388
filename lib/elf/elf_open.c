/* SPDX-License-Identifier: MIT */
/* Opening ELF files: libelf's version set once, and a descriptor that is
 * a regular file (a FIFO must not hang the open, a directory is no ELF). */
#define _GNU_SOURCE
#include "elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

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

