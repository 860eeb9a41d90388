/* SPDX-License-Identifier: MIT */
/* Opening ELF files: libelf's version set once, and a descriptor that is
 * a regular file (ds__open_regular(): a FIFO must not hang the open, a
 * directory is no ELF). */
#define _GNU_SOURCE
#include "elfinfo.h"

#include <gelf.h>

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
	return ds__open_regular(path);
}
