/* SPDX-License-Identifier: MIT */
/* A candidate file, opened and checked as the debuginfo or executable of a
 * build ID (its build ID read and compared, its ELF whole), or as a split
 * DWARF file (no build ID: whoever uses it checks the dwo id); and the
 * names of the places a found file comes from.  The local lookup, the
 * debuginfod cache and the fetcher all open what they find this way. */
#define _GNU_SOURCE
#include "elfinfo.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

DS_API const char *ds_source_name(enum ds_source src)
{
	switch (src) {
	case DS_SOURCE_SELF:
		return "self";
	case DS_SOURCE_BUILD_ID_DIR:
		return "build-id-dir";
	case DS_SOURCE_DEBUGLINK:
		return "debuglink";
	case DS_SOURCE_PERF_CACHE:
		return "perf-cache";
	case DS_SOURCE_DEBUGINFOD_CACHE:
		return "debuginfod-cache";
	case DS_SOURCE_DEBUGINFOD:
		return "debuginfod";
	case DS_SOURCE_DIRINDEX:
		return "indexed-dir";
	case DS_SOURCE_NONE:
		break;
	}
	return "none";
}

int ds__open_split(const char *path, struct ds_found *found, struct stat *st)
{
	struct stat sb;
	int fd = ds__elf_open_fd(path);

	*found = (struct ds_found){ .fd = -1 };
	if (fd < 0)
		return fd == -EISDIR ? -ENOEXEC : fd;
	found->fd = fd;
	found->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	found->path = strdup(path);
	if (!found->path) {
		ds__found_release(found);
		return -ENOMEM;
	}
	if (!found->elf || elf_kind(found->elf) != ELF_K_ELF || fstat(fd, &sb) != 0) {
		ds__found_release(found);
		return -ENOEXEC;
	}
	found->size = (uint64_t)sb.st_size;
	if (st)
		*st = sb;
	return 0;
}

void ds__found_release(struct ds_found *found)
{
	if (found->elf)
		elf_end(found->elf);
	if (found->fd >= 0)
		close(found->fd);
	free(found->path);
	memset(found, 0, sizeof(*found));
	found->fd = -1;
}

/* Open path and decide whether it is what we want.  On success the file
 * stays open in *found; otherwise *reason says why it was refused. */
int ds__open_candidate(const char *path, const struct ds_build_id *bid, enum ds_artifact what,
		       struct ds_found *found, const char **reason)
{
	struct ds_build_id got;
	struct ds_elf_info info;
	struct stat st;
	int fd, err;
	Elf *elf;

	fd = ds__elf_open_fd(path);
	if (fd < 0) {
		*reason = fd == -ENOENT ? "absent" : ds_strerror(fd);
		return fd;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		*reason = "not ELF";
		err = -ENOEXEC;
		goto fail;
	}
	err = ds__elf_build_id(elf, &got);
	if (err) {
		*reason = ds_strerror(err);
		goto fail;
	}
	if (!ds_build_id_equal(&got, bid)) {
		*reason = "build ID differs";
		err = -EBADMSG;
		goto fail;
	}
	err = ds__elf_inspect(elf, &info);
	if (err) {
		*reason = ds_strerror(err);
		goto fail;
	}
	if (what == DS_ARTIFACT_DEBUGINFO && !info.has_debug_info) {
		*reason = "no .debug_info";
		err = -ENOENT;
		goto fail;
	}
	if (what == DS_ARTIFACT_EXECUTABLE && !info.has_code) {
		*reason = "no code";
		err = -ENOENT;
		goto fail;
	}
	found->path = strdup(path);
	if (!found->path || fstat(fd, &st) != 0) {
		*reason = "out of memory";
		err = -ENOMEM;
		goto fail;
	}
	found->fd = fd;
	found->elf = elf;
	found->size = (uint64_t)st.st_size;
	return 0;
fail:
	free(found->path);
	found->path = NULL;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

