// SPDX-License-Identifier: MIT
/*
 * Kernel addresses symbolized: ds_kernel (include/dsostore.h, "The
 * kernel").
 *
 * Names come from kallsyms (lib/kernel.c parses it; perf's choice among
 * aliases), module symbols with their module ("[ext4]").  File:line and
 * inline frames come from the vmlinux's DWARF when it can be had: a
 * vmlinux named by the caller, else one of perf's places for it (the
 * running kernel's only: its build ID must be the one in
 * /sys/kernel/notes), else by that build ID through the store (debug
 * directories, perf's cache, debuginfod).  KASLR moved the running
 * kernel: the address is looked up in the vmlinux at itself minus the
 * distance between _text in kallsyms and _text in the vmlinux's symbols.
 *
 * Not done: module debuginfo (.ko.debug is ET_REL, its DWARF relocated
 * per section, which the store does not do yet): module addresses get
 * kallsyms names only.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define KERNEL_REF "_text" /* perf's reference symbol, in both */

struct ds_kernel {
	struct ds_store *store;
	struct ds_context *ctx; /* the store's */
	char *vmlinux_path; /* the caller's, or NULL */
	struct ds__kallsyms *ksyms;
	int kerr; /* of loading ksyms */
	bool loaded;
	struct ds_build_id bid; /* size 0: unknown */

	struct ds_dso *vmlinux; /* with DWARF, or NULL */
	bool vmlinux_tried;
	uint64_t kaslr; /* runtime minus link-time address (mod 2^64) */

	struct ds_sym_answer ans;
	struct ds_frame *frames; /* the answer's, copied and moved by kaslr */
	size_t framecap;
	char module[80]; /* "[kernel.kallsyms]", "[ext4]" */
};

DS_API struct ds_kernel *ds_kernel_new(struct ds_store *store, const struct ds_kernel_opts *opts)
{
	const char *vmlinux = DS_OPT(opts, vmlinux, NULL);
	struct ds_kernel *k = calloc(1, sizeof(*k));

	if (!k || (vmlinux && !(k->vmlinux_path = strdup(vmlinux)))) {
		free(k);
		errno = ENOMEM;
		return NULL;
	}
	k->store = store;
	k->ctx = ds__store_context(store);
	return k;
}

DS_API void ds_kernel_free(struct ds_kernel *k)
{
	if (!k)
		return;
	ds__kallsyms_free(k->ksyms);
	ds_dso_put(k->vmlinux);
	free(k->vmlinux_path);
	free(k->frames);
	free(k);
}

/* The value of symbol name in the ELF's symbol table. */
static bool elf_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		if (!(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < data->d_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    !(s = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(s, name)) {
				*value = sym.st_value;
				return true;
			}
		}
	}
	return false;
}

/* dso if its debuginfo has DWARF and _text (k->kaslr set), else put. */
static struct ds_dso *usable(struct ds_kernel *k, struct ds_dso *dso, uint64_t ref_now)
{
	const struct ds_debuginfo *di;
	uint64_t ref_link;
	Elf *elf;
	bool ok;

	if (!dso)
		return NULL;
	if (ds_dso_debuginfo(dso, &di) || ds_dso_pin(dso)) {
		ds_dso_put(dso);
		return NULL;
	}
	elf = ds_debuginfo_elf(di);
	ok = elf && elf_symbol(elf, KERNEL_REF, &ref_link);
	ds_dso_unpin(dso);
	if (!ok) {
		ds_debug(k->ctx, "kernel: %s has no %s symbol", ds_debuginfo_path(di), KERNEL_REF);
		ds_dso_put(dso);
		return NULL;
	}
	k->kaslr = ref_now - ref_link;
	ds_debug(k->ctx, "kernel: DWARF from %s, KASLR offset 0x%llx", ds_debuginfo_path(di),
		 (unsigned long long)k->kaslr);
	return dso;
}

/* A file at path whose build ID is the kernel's (any, when unknown). */
static struct ds_dso *local_vmlinux(struct ds_kernel *k, const char *path)
{
	struct ds_dso *dso = ds_store_findnew(k->store, path, NULL);
	struct ds_dso_id id;

	if (!dso)
		return NULL;
	ds_dso_id(dso, &id);
	if (k->bid.size && !(id.flags & DS_DSO_ID_BUILD_ID && ds_build_id_equal(&id.build_id, &k->bid))) {
		ds_dso_put(dso);
		return NULL;
	}
	return dso;
}

/* The vmlinux with DWARF, once: the caller's, perf's places (the running
 * kernel only), the build ID through the store. */
static void find_vmlinux(struct ds_kernel *k)
{
	static const char *const places[] = { "/usr/lib/debug/boot/vmlinux-%s", "/boot/vmlinux-%s",
					      "/usr/lib/debug/lib/modules/%s/vmlinux",
					      "/lib/modules/%s/build/vmlinux" };
	struct utsname u;
	uint64_t ref_now;
	char path[PATH_MAX];

	if (k->vmlinux_tried)
		return;
	k->vmlinux_tried = true;
	if (!ds__kallsyms_ref(k->ksyms, &ref_now))
		return; /* nothing to relocate by */
	if (k->vmlinux_path) {
		k->vmlinux = usable(k, ds_store_findnew(k->store, k->vmlinux_path, NULL), ref_now);
		return;
	}
	if (!k->ctx->kernel_root && !k->ctx->kallsyms && uname(&u) == 0)
		for (size_t i = 0; i < sizeof(places) / sizeof(places[0]) && !k->vmlinux; i++) {
			snprintf(path, sizeof(path), places[i], u.release);
			if (access(path, R_OK) == 0)
				k->vmlinux = usable(k, local_vmlinux(k, path), ref_now);
		}
	if (!k->vmlinux && k->bid.size) {
		struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID, .build_id = k->bid };

		k->vmlinux = usable(k, ds_store_findnew(k->store, NULL, &id), ref_now);
	}
}

static int load(struct ds_kernel *k)
{
	if (k->loaded)
		return k->kerr;
	k->loaded = true;
	if (!ds__kernel_build_id(k->ctx, &k->bid))
		k->bid.size = 0;
	/* All of it: module symbols are not in the cached core. */
	k->kerr = ds__kallsyms_load(k->ctx, KERNEL_REF, true, &k->ksyms);
	return k->kerr;
}

DS_API int ds_kernel_build_id(struct ds_kernel *k, struct ds_build_id *out)
{
	load(k);
	if (!k->bid.size)
		return -ENODATA;
	*out = k->bid;
	return 0;
}

/* The answer of the vmlinux's DWARF for addr, moved back to addr. */
static bool from_dwarf(struct ds_kernel *k, uint64_t addr, unsigned flags,
		       struct ds_sym_batch *batch)
{
	uint64_t link = addr - k->kaslr;
	const struct ds_sym_answer *a;
	size_t n = 0;

	if (ds_dso_symbolize_batch(k->vmlinux, &link, 1, flags & ~DS_SYM_FILE_OFFSET, batch) < 0)
		return false;
	a = ds_sym_batch_answers(batch, &n);
	if (n != 1 || a->status != DS_SYM_FOUND || !a->nframes)
		return false;
	if (a->nframes > k->framecap) {
		struct ds_frame *v = realloc(k->frames, a->nframes * sizeof(*v));

		if (!v)
			return false;
		k->frames = v;
		k->framecap = a->nframes;
	}
	for (size_t i = 0; i < a->nframes; i++) {
		k->frames[i] = a->frames[i];
		if (k->frames[i].function_start)
			k->frames[i].function_start += k->kaslr;
	}
	k->ans = *a;
	k->ans.addr = addr;
	k->ans.frames = k->frames;
	return true;
}

DS_API int ds_kernel_symbolize(struct ds_kernel *k, uint64_t addr, unsigned int flags,
			       struct ds_sym_batch *batch, const struct ds_sym_answer **answer,
			       const char **module)
{
	const char *name, *mod = NULL;
	uint64_t start = 0;
	int err = load(k);

	*answer = NULL;
	if (module)
		*module = NULL;
	if (err)
		return err;
	name = ds__kallsyms_find_mod(k->ksyms, addr, &start, &mod);
	if (mod)
		snprintf(k->module, sizeof(k->module), "[%s]", mod);
	else
		snprintf(k->module, sizeof(k->module), "[kernel.kallsyms]");
	if (module)
		*module = k->module;
	*answer = &k->ans;
	if (!mod) {
		find_vmlinux(k);
		if (k->vmlinux && from_dwarf(k, addr, flags, batch))
			return 0;
	}
	k->ans = (struct ds_sym_answer){ .addr = addr, .status = DS_SYM_NOT_FOUND };
	if (!name)
		return 0;
	if (!k->framecap) {
		if (!(k->frames = calloc(1, sizeof(*k->frames))))
			return -ENOMEM;
		k->framecap = 1;
	}
	k->frames[0] = (struct ds_frame){ .function = name,
					  .function_start = start,
					  .function_len = (unsigned)strlen(name) };
	k->ans.frames = k->frames;
	k->ans.nframes = 1;
	k->ans.status = DS_SYM_FOUND;
	k->ans.from_symtab = true;
	return 0;
}

/* Where module is loaded now: /proc/modules' address (what perf record
 * wrote as the module's MMAP start), else the lowest address kallsyms has
 * for it.  false: not loaded. */
bool ds__kernel_module_start(struct ds_context *ctx, const struct ds__kallsyms *k,
			     const char *module, uint64_t *start)
{
	char path[PATH_MAX], line[4096];
	size_t mlen = strlen(module);
	FILE *f;

	ds__kernel_path(ctx, "/proc/modules", path, sizeof(path));
	if ((f = fopen(path, "re"))) {
		bool found = false;

		while (!found && fgets(line, sizeof(line), f))
			found = ds__modules_line(line, strlen(line), module, mlen, start);
		fclose(f);
		if (found)
			return true;
	}
	return k && ds__kallsyms_module_start(k, module, start);
}

/* One /proc/modules line, "NAME SIZE REFS DEPS STATE ADDR": its address
 * when NAME is module (dashes and underscores alike, as the kernel has
 * them).  Addresses of 0 (kptr_restrict) are not addresses. */
bool ds__modules_line(const char *line, size_t len, const char *module, size_t mlen,
		      uint64_t *start)
{
	const char *p = line, *end = line + len, *f[6];
	size_t flen[6];
	int n = 0;
	uint64_t v = 0;

	while (n < 6) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p == '\n')
			break;
		f[n] = p;
		while (p < end && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		flen[n] = (size_t)(p - f[n]);
		n++;
	}
	if (n < 6 || flen[0] != mlen)
		return false;
	for (size_t i = 0; i < mlen; i++) {
		char a = f[0][i] == '-' ? '_' : f[0][i], b = module[i] == '-' ? '_' : module[i];

		if (a != b)
			return false;
	}
	if (flen[5] < 3 || flen[5] > 18 || f[5][0] != '0' || (f[5][1] | 0x20) != 'x')
		return false;
	for (size_t i = 2; i < flen[5]; i++) {
		int c = f[5][i], d = c >= '0' && c <= '9' ? c - '0'
				     : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
									     : -1;

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!v)
		return false;
	*start = v;
	return true;
}

/* A module's name from its perf DSO path: "[ext4]", or a .ko file's
 * ("/lib/modules/R/kernel/fs/ext4/ext4.ko.zst"), dashes as underscores
 * (the kernel's spelling, as kallsyms has it).  false: not a module's. */
bool ds__kernel_module_name(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/'), *end;
	size_t n;

	if (path[0] == '[') {
		base = path + 1;
		end = strchr(base, ']');
		if (!end || end[1])
			return false;
	} else {
		base = base ? base + 1 : path;
		end = strstr(base, ".ko");
		if (!end || (end[3] && end[3] != '.'))
			return false;
	}
	n = (size_t)(end - base);
	if (!n || n >= len)
		return false;
	for (size_t i = 0; i < n; i++)
		out[i] = base[i] == '-' ? '_' : base[i];
	out[n] = 0;
	return true;
}
