/* SPDX-License-Identifier: MIT */
/* An opened debuginfo: the file a DSO holds open so that a cache cleaned
 * under it cannot take it away. */
#define _GNU_SOURCE
#include "elfinfo.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ds__debuginfo_init(struct ds_debuginfo *di, const struct ds_build_id *bid)
{
	memset(di, 0, sizeof(*di));
	atomic_init(&di->path, NULL);
	atomic_init(&di->recent, false);
	di->bid = bid;
	di->fd = -1;
}

static void set_path(struct ds_debuginfo *di, char *path)
{
	char *old = atomic_load_explicit(&di->path, memory_order_relaxed);

	if (old && !strcmp(old, path)) {
		free(path);
		return;
	}
	if (old) {
		struct ds_retired *r = malloc(sizeof(*r));

		if (!r) {
			free(path); /* keep the old, still-valid name */
			return;
		}
		r->path = old;
		r->next = di->retired;
		di->retired = r;
	}
	atomic_store_explicit(&di->path, path, memory_order_release);
}

void ds__debuginfo_adopt(struct ds_debuginfo *di, struct ds_found *found)
{
	set_path(di, found->path);
	di->source = found->source;
	di->fd = found->fd;
	di->elf = found->elf;
	di->size = found->size;
	memset(found, 0, sizeof(*found));
	found->fd = -1;
}

bool ds__debuginfo_is_open(const struct ds_debuginfo *di)
{
	return di->fd >= 0;
}

uint64_t ds__debuginfo_close(struct ds_debuginfo *di)
{
	uint64_t size = di->size;

	if (di->elf)
		elf_end(di->elf);
	if (di->fd >= 0)
		close(di->fd);
	di->elf = NULL;
	di->fd = -1;
	di->size = 0;
	return size;
}

int ds__debuginfo_reopen(struct ds_debuginfo *di)
{
	const char *path = atomic_load_explicit(&di->path, memory_order_acquire);
	struct ds_found found = { .fd = -1 };
	const char *reason;
	enum ds_source source = di->source;
	int err;

	if (!path)
		return -ENOENT;
	err = ds__open_candidate(path, di->bid, DS_ARTIFACT_DEBUGINFO, &found, &reason);
	if (err)
		return err;
	found.source = source;
	ds__debuginfo_adopt(di, &found);
	return 0;
}

void ds__debuginfo_release(struct ds_debuginfo *di)
{
	ds__debuginfo_close(di);
	free(atomic_load_explicit(&di->path, memory_order_relaxed));
	while (di->retired) {
		struct ds_retired *r = di->retired;

		di->retired = r->next;
		free(r->path);
		free(r);
	}
}

DS_API const char *ds_debuginfo_path(const struct ds_debuginfo *di)
{
	return di ? atomic_load_explicit(&((struct ds_debuginfo *)di)->path, memory_order_acquire)
		  : NULL;
}

DS_API const struct ds_build_id *ds_debuginfo_build_id(const struct ds_debuginfo *di)
{
	return di ? di->bid : NULL;
}

DS_API enum ds_source ds_debuginfo_source(const struct ds_debuginfo *di)
{
	return di ? di->source : DS_SOURCE_NONE;
}

DS_API int ds_debuginfo_fd(const struct ds_debuginfo *di)
{
	return di ? di->fd : -EINVAL;
}

DS_API struct Elf *ds_debuginfo_elf(const struct ds_debuginfo *di)
{
	return di ? di->elf : NULL;
}
