/* SPDX-License-Identifier: MIT */
/*
 * Source file names: what the DWARF of a debuginfo names, and paths
 * compared as a debuginfod server compares them.  A server answers
 * /buildid/ID/source/PATH only for a PATH the DWARF of ID names, so the
 * set is read once per debuginfo (libdw's line tables: what elfutils'
 * debuginfod reads, dwz partial units and split DWARF skeletons as libdw
 * gives them) and a request's path is looked up in it, both canonical.
 */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* RFC 3986 5.2.4's remove_dot_segments over an absolute path, with the
 * POSIX "//" taken as "/" (debuginfod's canon_pathname): segment by
 * segment, "" and "." dropped, ".." taking back the last one kept (none
 * at the root).  A path that ends in a directory ("/", "/.", "/..") keeps
 * its trailing slash, as the RFC's does.  The result is never longer than
 * path. */
DS_API int ds_source_canon(const char *path, char *out, size_t len)
{
	size_t o = 0;
	const char *p;
	bool dir_end = false;

	if (!path || !out || path[0] != '/')
		return -EINVAL;
	for (p = path; *p;) {
		const char *seg, *e;
		size_t n;

		while (*p == '/')
			p++;
		seg = p;
		e = strchrnul(seg, '/');
		n = (size_t)(e - seg);
		p = e;
		dir_end = true;
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* the slash before it */
			continue;
		}
		dir_end = *e == '/';
		if (o + 1 + n >= len)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, seg, n);
		o += n;
	}
	if (o == 0 || dir_end) {
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		out[o++] = '/';
	}
	out[o] = 0;
	return 0;
}

/* The names as they are collected: canonical strings one after another
 * in text (NUL-terminated), their offsets in off. */
struct srcset {
	char *text;
	size_t len, cap;
	size_t *off;
	size_t n, ncap;
};

static int srcset_add(struct srcset *s, const char *dir, const char *name)
{
	char joined[8192], *dst;
	const char *path = name;
	size_t room;
	int err;

	if (name[0] != '/') {
		/* Relative: under the CU's compilation directory, or left out. */
		if (!dir || dir[0] != '/')
			return 0;
		if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", dir, name) >= sizeof(joined))
			return 0; /* no file of a request can be that long either */
		path = joined;
	}
	room = strlen(path) + 2; /* canonical is never longer (+ a slash, NUL) */
	if (s->len + room > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *t;

		while (cap < s->len + room)
			cap *= 2;
		if (!(t = realloc(s->text, cap)))
			return -ENOMEM;
		s->text = t;
		s->cap = cap;
	}
	if (s->n == s->ncap) {
		size_t *o = ds__grow(s->off, &s->ncap, s->n + 1, sizeof(*o));

		if (!o)
			return -ENOMEM;
		s->off = o;
	}
	dst = s->text + s->len;
	if ((err = ds_source_canon(path, dst, room)))
		return err == -ENAMETOOLONG ? 0 : err;
	s->off[s->n++] = s->len;
	s->len += strlen(dst) + 1;
	return 0;
}

static int cmp_names(const void *a, const void *b, void *text)
{
	return strcmp((const char *)text + *(const size_t *)a, (const char *)text + *(const size_t *)b);
}

/* One unit's line table: every file, relative ones under dirs[0] (the
 * compilation directory, as libdw gives it for every DWARF version) or
 * else the unit's DW_AT_comp_dir. */
static int add_unit(struct srcset *s, Dwarf_Die *cudie, Dwarf_Half version)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	const char *const *dirs;
	const char *dir = NULL;
	size_t nfiles, ndirs;
	int err;

	if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
		return 0; /* no line table */
	if (dwarf_getsrcdirs(files, &dirs, &ndirs) == 0 && ndirs > 0)
		dir = dirs[0];
	if (!dir)
		dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	/* Before DWARF 5 there is no file 0: libdw's is a "???" stand-in. */
	for (size_t i = version < 5 ? 1 : 0; i < nfiles; i++) {
		const char *name = dwarf_filesrc(files, i, NULL, NULL);

		if (!name || !*name || !strcmp(name, "<built-in>"))
			continue;
		if ((err = srcset_add(s, dir, name)))
			return err;
	}
	return 0;
}

/* The sorted, unique names as one block: the pointer array (NULL-ended)
 * and then the strings. */
static int srcset_block(struct srcset *s, char ***names, size_t *n)
{
	size_t u = 0, bytes = 0;
	char **v, *t;

	if (s->n)
		qsort_r(s->off, s->n, sizeof(*s->off), cmp_names, s->text);
	for (size_t i = 0; i < s->n; i++) {
		if (u && !strcmp(s->text + s->off[u - 1], s->text + s->off[i]))
			continue;
		s->off[u++] = s->off[i];
		bytes += strlen(s->text + s->off[i]) + 1;
	}
	v = malloc((u + 1) * sizeof(*v) + bytes);
	if (!v)
		return -ENOMEM;
	t = (char *)(v + u + 1);
	for (size_t i = 0; i < u; i++) {
		size_t l = strlen(s->text + s->off[i]) + 1;

		v[i] = memcpy(t, s->text + s->off[i], l);
		t += l;
	}
	v[u] = NULL;
	*names = v;
	*n = u;
	return 0;
}

DS_API int ds_source_names(const char *debuginfo_path, char ***names, size_t *n)
{
	struct srcset s = { 0 };
	Dwarf_CU *cu = NULL;
	Dwarf *dw = NULL;
	Elf *elf = NULL;
	const char *why;
	uint64_t extent;
	struct stat st;
	char msg[256];
	int fd, err = 0, r;

	if (!debuginfo_path || !names || !n)
		return -EINVAL;
	fd = ds__elf_open_fd(debuginfo_path);
	if (fd < 0)
		return fd;
	ds__elf_init();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	/* Sections past the file's end (a truncated file): libelf would map
	 * what is there and libdw read past it. */
	if (fstat(fd, &st) != 0 || ds__elf_extent(fd, (uint64_t)st.st_size, false, &extent, &why)) {
		err = -ENOEXEC;
		goto out;
	}
	/* dwarf_begin_elf() decompresses every DWARF section: no bombs. */
	if ((err = ds__elf_check_compressed(elf, msg, sizeof(msg))))
		goto out;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		err = -ENODATA;
		goto out;
	}
	for (;;) {
		Dwarf_Die cudie, subdie;
		Dwarf_Half version;
		uint8_t unit_type;

		r = dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie);
		if (r != 0)
			break; /* 1: the last one; -1: the rest is unreadable */
		if ((err = add_unit(&s, &cudie, version)))
			goto out;
	}
	err = srcset_block(&s, names, n);
out:
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	close(fd);
	free(s.text);
	free(s.off);
	return err;
}
