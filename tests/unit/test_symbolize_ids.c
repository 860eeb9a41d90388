/* SPDX-License-Identifier: MIT */
/*
 * ds_symbolize_build_ids(): frames sent as (build ID, address) pairs.
 *
 * A program and a shared library are compiled here (-g -O2, an inlined
 * function in each), their debuginfo put where a debug directory holds it
 * (<dir>/.build-id/xx/rest.debug, objcopy --only-keep-debug; the stripped
 * file as xx/rest, what file offsets are placed by).  Addresses inside
 * their functions (nm -S), given as virtual addresses, as file offsets
 * (the PT_LOAD that readelf -l shows holding them) and as return
 * addresses (the answer must be addr2line's for addr - 1, with the
 * address as given), interleaved across the modules, must come back in
 * input order, each as `addr2line -f -i -e FILE` names it on the
 * unstripped file.  A module index past the IDs is DS_SYM_ERROR -EINVAL;
 * a build ID nobody has is "no debuginfo".
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char prog_src[] =
	"static inline __attribute__((always_inline)) int sq(int x) { return x * x + 1; }\n"
	"__attribute__((noinline)) int prog_one(int x) { return sq(x) * 7 + x / 3; }\n"
	"__attribute__((noinline)) int prog_two(int x) { return prog_one(x) + sq(x + 2); }\n"
	"int main(int argc, char **argv) { (void)argv; return prog_two(argc); }\n";

static const char lib_src[] =
	"static inline __attribute__((always_inline)) int half(int x) { return x / 2 + 3; }\n"
	"__attribute__((noinline)) int lib_one(int x) { return half(x) * 11 - x; }\n"
	"__attribute__((noinline)) int lib_two(int x) { return lib_one(x) + half(x * 5); }\n";

struct module {
	const char *name;
	char *path; /* unstripped: the oracle's */
	struct ds_build_id bid;
};

/* The file offset of vaddr through the PT_LOAD holding it, as
 * readelf -lW prints the program headers. */
static uint64_t offset_of(const char *file, uint64_t vaddr)
{
	FILE *p = t_popen("readelf -lW '%s' | awk '$1 == \"LOAD\" { print $2, $3, $5 }'", file);
	unsigned long long off, va, filesz;
	uint64_t r = UINT64_MAX;

	while (fscanf(p, "%llx %llx %llx", &off, &va, &filesz) == 3)
		if (vaddr >= va && vaddr < va + filesz)
			r = vaddr - va + off;
	pclose(p);
	if (r == UINT64_MAX) {
		fprintf(stderr, "no PT_LOAD of %s holds 0x%" PRIx64 "\n", file, vaddr);
		exit(1);
	}
	return r;
}

/* addr2line -f -i's answer for vaddr, malloc()ed. */
static char *a2l(const char *file, uint64_t vaddr)
{
	FILE *p = t_popen("addr2line -f -i -e '%s' 0x%" PRIx64, file, vaddr);
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	char line[4096];

	while (fgets(line, sizeof(line), p))
		fputs(line, m);
	pclose(p);
	fclose(m);
	return s;
}

/* Build m's file with flags, install its debuginfo into dbg. */
static void make_module(struct module *m, const char *src, const char *flags, const char *dbg)
{
	char *hex, *dir;

	m->path = t_path("%s", m->name);
	t_compile("gcc", flags, src, m->path);
	hex = strdup(t_readelf_build_id(m->path));
	if (!hex || strlen(hex) < 4) {
		fprintf(stderr, "no build ID in %s\n", m->path);
		exit(1);
	}
	t_hex_to_bid(hex, &m->bid);
	if (asprintf(&dir, "%s/.build-id/%.2s", dbg, hex) < 0)
		exit(2);
	if (t_sh("mkdir -p '%s' && objcopy --only-keep-debug '%s' '%s/%s.debug' && "
		 "objcopy --strip-all '%s' '%s/%s'",
		 dir, m->path, dir, hex + 2, m->path, dir, hex + 2) != 0) {
		fprintf(stderr, "objcopy failed\n");
		exit(1);
	}
	free(dir);
	free(hex);
}

struct want {
	struct ds_sym_ref ref;
	uint64_t oracle_vaddr; /* what addr2line is asked */
};

static struct ds_sym_result view(const struct ds_sym_answer *a)
{
	return (struct ds_sym_result){ .addr = a->addr,
				       .nframes = a->nframes,
				       .frames = (struct ds_frame *)a->frames,
				       .from_symtab = a->from_symtab };
}

int main(void)
{
	char *dbg = t_path("debug");
	const char *dirs[] = { dbg, NULL };
	struct module mods[2] = { { .name = "prog" }, { .name = "libm2.so" } };
	const char *funcs[2][2] = { { "prog_one", "prog_two" }, { "lib_one", "lib_two" } };
	struct ds_build_id ids[3];
	struct want w[64];
	size_t n = 0;
	char *cache = t_path("dcache");

	if (t_sh("command -v addr2line objcopy readelf eu-readelf >/dev/null") != 0) {
		fprintf(stderr, "SKIP: binutils or elfutils missing\n");
		return 77;
	}
	make_module(&mods[0], prog_src, "-g -O2 -Wl,--build-id", dbg);
	make_module(&mods[1], lib_src, "-g -O2 -shared -fPIC -Wl,--build-id", dbg);
	ids[0] = mods[0].bid;
	ids[1] = mods[1].bid;
	/* Nobody's: 20 bytes no file has. */
	t_hex_to_bid("00112233445566778899aabbccddeeff01234567", &ids[2]);

	/* Interleaved: per function, its start + 1, its middle, as vaddr,
	 * offset and return address, alternating modules. */
	for (int f = 0; f < 2; f++) {
		for (int m = 0; m < 2; m++) {
			uint64_t lo, hi;

			t_symbol_range(mods[m].path, funcs[m][f], &lo, &hi);
			uint64_t pts[2] = { lo + 1, lo + (hi - lo) / 2 };

			for (int k = 0; k < 2; k++) {
				uint64_t v = pts[k];

				w[n++] = (struct want){ { (uint32_t)m, 0, v }, v };
				w[n++] = (struct want){
					{ (uint32_t)m, DS_SYM_REF_OFFSET, offset_of(mods[m].path, v) }, v
				};
				w[n++] = (struct want){ { (uint32_t)m, DS_SYM_REF_RETURN, v + 1 }, v };
				w[n++] = (struct want){ { (uint32_t)m,
							  DS_SYM_REF_RETURN | DS_SYM_REF_OFFSET,
							  offset_of(mods[m].path, v) + 1 },
							v };
			}
		}
	}
	size_t unknown = n, outside = n + 1;

	w[n++] = (struct want){ { 2, 0, 0x401000 }, 0 };
	w[n++] = (struct want){ { 3, 0, 0x1000 }, 0 };
	w[n++] = (struct want){ { 0, 0, w[0].ref.addr }, w[0].oracle_vaddr }; /* a repeat */

	DS_OPTS(ds_context_opts, co, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = "",
		.cache_path = cache, .symindex = -1);
	struct ds_context *ctx = ds_context_new(&co);
	DS_OPTS(ds_store_opts, so, .file_offsets = true);
	struct ds_store *store = ctx ? ds_store_new(ctx, "host", &so) : NULL;
	struct ds_sym_batch *b = ds_sym_batch_new();
	struct ds_sym_ref refs[64];
	const struct ds_sym_answer *ans;
	size_t got = 0, nfound = 0;
	int rc;

	if (!store || !b) {
		perror("setup");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		refs[i] = w[i].ref;
	rc = ds_symbolize_build_ids(store, ids, 3, refs, n, DS_SYM_INLINES, b);
	ans = ds_sym_batch_answers(b, &got);
	CHECK_EQ_INT(got, n);
	for (size_t i = 0; i < got && i < n; i++) {
		const struct ds_sym_answer *a = &ans[i];

		if (i == unknown) {
			CHECK_EQ_INT(a->reason, DS_SYM_REASON_NO_DEBUGINFO);
			CHECK_EQ_INT(a->nframes, 0);
			CHECK(a->status != DS_SYM_FOUND);
			continue;
		}
		if (i == outside) {
			CHECK_EQ_INT(a->status, DS_SYM_ERROR);
			CHECK_EQ_INT(a->error, -EINVAL);
			CHECK_EQ_INT(a->nframes, 0);
			continue;
		}
		/* (oracle_vaddr: for a return address, the one before it) */
		struct ds_sym_result r = view(a);
		char *want = a2l(mods[w[i].ref.module].path, w[i].oracle_vaddr);
		char *have = t_format_a2l(&r);

		nfound += a->status == DS_SYM_FOUND;
		CHECK_EQ_INT(a->status, DS_SYM_FOUND);
		CHECK_EQ_INT(a->reason, DS_SYM_REASON_NONE);
		if (strcmp(want, have)) {
			fprintf(stderr, "ref %zu (module %u flags %u addr 0x%" PRIx64
					"): addr2line says\n%sds_symbolize_build_ids\n%s",
				i, w[i].ref.module, w[i].ref.flags, w[i].ref.addr, want, have);
			t_failures++;
		}
		/* A return address is answered as given; a plain one as the
		 * virtual address looked up (an offset translated). */
		if (w[i].ref.flags & DS_SYM_REF_RETURN)
			CHECK_EQ_INT(a->addr, w[i].ref.addr);
		else
			CHECK_EQ_INT(a->addr, w[i].oracle_vaddr);
		free(want);
		free(have);
	}
	CHECK_EQ_INT(rc, (int)nfound);
	CHECK_EQ_INT(nfound, n - 2);

	/* Virtual addresses alone, one group per module: the answers'
	 * strings are those the batch's scratch batches keep (not copied),
	 * and those are kept from call to call.  Asked twice on the same
	 * batch, after the call above: addr2line's answers each time. */
	for (int rep = 0; rep < 2; rep++) {
		struct ds_sym_ref vrefs[64];
		size_t vw[64], nv = 0;

		for (size_t i = 0; i < unknown; i++)
			if (!w[i].ref.flags) {
				vw[nv] = i;
				vrefs[nv++] = w[i].ref;
			}
		rc = ds_symbolize_build_ids(store, ids, 2, vrefs, nv, DS_SYM_INLINES, b);
		CHECK_EQ_INT(rc, (int)nv);
		ans = ds_sym_batch_answers(b, &got);
		CHECK_EQ_INT(got, nv);
		for (size_t k = 0; k < got && k < nv; k++) {
			struct ds_sym_result r = view(&ans[k]);
			const struct want *wk = &w[vw[k]];
			char *want = a2l(mods[wk->ref.module].path, wk->oracle_vaddr);
			char *have = t_format_a2l(&r);

			if (strcmp(want, have)) {
				fprintf(stderr, "pass %d, ref %zu: addr2line says\n%sds_symbolize_build_ids\n%s",
					rep, vw[k], want, have);
				t_failures++;
			}
			free(want);
			free(have);
		}
	}

	/* Bad arguments: no answers. */
	CHECK_EQ_INT(ds_symbolize_build_ids(store, NULL, 1, refs, 1, 0, b), -EINVAL);
	ds_sym_batch_answers(b, &got);
	CHECK_EQ_INT(got, 0);
	CHECK_EQ_INT(ds_symbolize_build_ids(store, ids, 3, refs, 0, 0, b), 0);
	CHECK_EQ_INT(ds_symbolize_build_ids(NULL, ids, 3, refs, 1, 0, b), -EINVAL);
	CHECK_EQ_INT(ds_symbolize_build_ids(store, ids, 3, refs, 1, 0, NULL), -EINVAL);

	ds_sym_batch_free(b);
	ds_store_free(store);
	ds_context_free(ctx);
	free(mods[0].path);
	free(mods[1].path);
	free(cache);
	free(dbg);
	return t_done("test_symbolize_ids");
}
