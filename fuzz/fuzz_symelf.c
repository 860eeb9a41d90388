/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the whole symbolize path on an arbitrary file: the bytes
 * become a file, the file a DSO of a fresh store, and a few addresses go
 * through ds_dso_symbolize() (with inlines and demangling), which opens
 * it (libelf, libdw, .gnu_debugdata through liblzma, .gnu_debuglink and
 * .gnu_debugaltlink lookups) and builds the index.  It must not crash,
 * leak or hang, whatever the bytes.
 *
 * Nothing outside a private temporary directory is looked at: the debug
 * directory is an empty one there, perf's build-id cache and debuginfod
 * are off, and the debuginfod cache path points there too.  The input
 * file lives in that directory as well (its name is reused for every
 * input), so a .gnu_debuglink can only name files of that directory.
 * (A mutated skeleton unit may name an absolute .dwo path or comp_dir:
 * that file is opened read-only and read as an ELF file, like any
 * candidate; nothing is written outside the directory.)
 *
 * The addresses: the first 8 bytes (usually garbage), 0x1000, 0, and a
 * sweep of e_entry - 128 to e_entry + 896 (e_entry read little-endian, 32
 * or 64 bit as EI_CLASS says): in a small program that is where main()
 * and the functions it inlines are.  The last one is also tried as a file offset.
 * A success is checked for sanity (the frames' strings are
 * readable, only the outer frame is not inlined), and the batch form must
 * agree with single calls, in order and reversed, one batch reused.  The
 * split units its skeletons name are asked for (ds_dso_split_files()),
 * and must add up.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "fuzzfile.h"

#include <dsostore.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

#define NSWEEP	  128 /* addresses from e_entry - 128 on, 8 bytes apart */
#define NADDR	  (NSWEEP + 4)
#define SYM_FLAGS (DS_SYM_INLINES | DS_SYM_DEMANGLE)

static char dir[64], path[96], debug_dir[96], cache_dir[96];

/* How calls ended: a corpus whose mutations all fail early exercises
 * little of the index. */
static struct {
	unsigned long inputs, indexed, frames, inlined, erange, other_err;
	unsigned long by_err[8]; /* ENOENT ENODATA ENOEXEC ENOMEM EINVAL ... */
} stats;

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_symelf: %lu inputs, %lu with an index, %lu frames (%lu inlined); "
		"errors: %lu -ENOENT, %lu -ENODATA, %lu -ENOEXEC, %lu -ERANGE, %lu other\n",
		stats.inputs, stats.indexed, stats.frames, stats.inlined, stats.by_err[0],
		stats.by_err[1], stats.by_err[2], stats.erange, stats.other_err);
}

static void cleanup(void)
{
	unlink(path);
	rmdir(debug_dir);
	/* The cache directory, if the library made it, holds nothing: no
	 * server is configured. */
	rmdir(cache_dir);
	rmdir(dir);
}

/* Once per process: libFuzzer's -fork and -jobs run several. */
static int setup(void)
{
	if (dir[0])
		return 0;
	if (fuzz_private_dir("symelf", dir, sizeof(dir)) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/input", dir);
	snprintf(debug_dir, sizeof(debug_dir), "%s/debug", dir);
	snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
	if (mkdir(debug_dir, 0700) != 0)
		return -1;
	atexit(cleanup);
	return 0;
}

static uint64_t load64(const uint8_t *p, size_t avail)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && i < avail; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void count_error(int err)
{
	static const int codes[] = {ENOENT, ENODATA, ENOEXEC};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (err == -codes[i]) {
			stats.by_err[i]++;
			return;
		}
	if (err == -ERANGE)
		stats.erange++;
	else
		stats.other_err++;
}

/* Touch every string (ASan sees a bad pointer) and check the shape. */
static void check_result(const struct ds_sym_result *r, uint64_t addr, bool file_offset)
{
	size_t sum = 0;

	if (!file_offset && r->addr != addr) {
		fprintf(stderr, "fuzz_symelf: result for 0x%llx says 0x%llx\n",
			(unsigned long long)addr, (unsigned long long)r->addr);
		abort();
	}
	if (r->nframes && !r->frames)
		abort();
	for (size_t i = 0; i < r->nframes; i++) {
		const struct ds_frame *f = &r->frames[i];

		sum += f->function ? strlen(f->function) : 0;
		sum += f->file ? strlen(f->file) : 0;
		/* Every frame but the outermost was inlined into the next. */
		if (i + 1 < r->nframes && !f->inlined) {
			fprintf(stderr, "fuzz_symelf: frame %zu of %zu not inlined\n", i,
				r->nframes);
			abort();
		}
		stats.inlined += f->inlined;
	}
	stats.frames += r->nframes;
	(void)sum;
}

static bool same_result(const struct ds_sym_answer *a, const struct ds_sym_result *b)
{
	if (a->nframes != b->nframes || a->addr != b->addr)
		return false;
	for (size_t i = 0; i < a->nframes; i++) {
		const struct ds_frame *x = &a->frames[i], *y = &b->frames[i];

		if (x->line != y->line || x->column != y->column || x->inlined != y->inlined ||
		    x->function_start != y->function_start || !x->function != !y->function ||
		    !x->file != !y->file || (x->function && strcmp(x->function, y->function)) ||
		    (x->file && strcmp(x->file, y->file)))
			return false;
	}
	return true;
}

/* The batch over addrs[0..n) (reversed: rev) equals the single calls
 * one[] that returned ret[]: the same error, the same frames. */
static void check_batch(struct ds_dso *dso, struct ds_sym_batch *b, const uint64_t *addrs,
			size_t n, bool rev, const struct ds_sym_result *one, const int *ret, int found)
{
	uint64_t in[NADDR];
	const struct ds_sym_answer *ans;
	size_t na;
	int bret;

	for (size_t i = 0; i < n; i++)
		in[i] = addrs[rev ? n - 1 - i : i];
	bret = ds_dso_symbolize_batch(dso, in, n, SYM_FLAGS, b);
	ans = ds_sym_batch_answers(b, &na);
	if (na != n && bret != -ENOMEM)
		abort();
	for (size_t k = 0; k < na; k++) {
		size_t i = rev ? n - 1 - k : k;

		/* An error of the batch is the one every single call had. */
		if ((bret < 0 && ret[i] != bret) || ans[k].error != ret[i]) {
			fprintf(stderr, "fuzz_symelf: batch returned %d (%d), single call %d\n",
				bret, ans[k].error, ret[i]);
			abort();
		}
		if (ret[i] == 0 && !same_result(&ans[k], &one[i])) {
			fprintf(stderr, "fuzz_symelf: batch and single differ at 0x%llx\n",
				(unsigned long long)addrs[i]);
			abort();
		}
	}
	if (bret >= 0 && bret != found)
		abort();
}

static void symbolize(struct ds_dso *dso, const uint64_t *addrs)
{
	struct ds_sym_result one[NADDR];
	struct ds_sym_batch *b = ds_sym_batch_new();
	int ret[NADDR], found = 0;

	for (int i = 0; i < NADDR; i++) {
		unsigned int flags = SYM_FLAGS | (i == NADDR - 1 ? DS_SYM_FILE_OFFSET : 0);

		ret[i] = ds_dso_symbolize(dso, addrs[i], flags, &one[i]);
		if (ret[i] > 0)
			abort(); /* 0 or a negative errno */
		if (ret[i] == 0) {
			check_result(&one[i], addrs[i], flags & DS_SYM_FILE_OFFSET);
			found += i < NADDR - 1 && one[i].nframes > 0;
		} else {
			count_error(ret[i]);
			if (one[i].nframes)
				abort(); /* an error with frames */
		}
		if (i == 0 && ret[i] == 0)
			stats.indexed++;
	}
	/* The batch, without the file offset one, equals single calls, in
	 * order and reversed (the batch reused). */
	if (!b)
		abort();
	check_batch(dso, b, addrs, NADDR - 1, false, one, ret, found);
	check_batch(dso, b, addrs, NADDR - 1, true, one, ret, found);
	ds_sym_batch_free(b);
	/* perf's naming (DS_SYM_ELF_NAMES) renames the function holding the
	 * address in DWARF's frames, nothing else: as many frames, the same
	 * lines.  (From ELF symbols alone, perf's extent of a symbol is not
	 * binutils': there the frames may differ.)  Names in LLVM's spelling
	 * here, binutils' above. */
	for (int i = 0; i < NADDR - 1; i++) {
		struct ds_sym_result elf;
		int r = ds_dso_symbolize(dso, addrs[i],
					 SYM_FLAGS | DS_SYM_ELF_NAMES | DS_SYM_LLVM_NAMES, &elf);
		bool dwarf = ret[i] == 0 && one[i].nframes && !one[i].from_symtab;

		if (r != ret[i] || (dwarf && elf.nframes != one[i].nframes)) {
			fprintf(stderr, "fuzz_symelf: 0x%llx: %d, %zu frames with perf's names; "
				"%d, %zu without\n", (unsigned long long)addrs[i], r,
				r ? 0 : elf.nframes, ret[i], ret[i] ? 0 : one[i].nframes);
			abort();
		}
		for (size_t f = 0; dwarf && f < elf.nframes; f++)
			if (elf.frames[f].line != one[i].frames[f].line ||
			    elf.frames[f].inlined != one[i].frames[f].inlined) {
				fprintf(stderr, "fuzz_symelf: 0x%llx: frame %zu differs with "
					"perf's names\n", (unsigned long long)addrs[i], f);
				abort();
			}
		if (r == 0)
			check_result(&elf, addrs[i], false);
		ds_sym_result_release(&elf);
	}
	for (int i = 0; i < NADDR; i++)
		ds_sym_result_release(&one[i]);
}

/* The split units the skeletons name (looked for beside the input, and
 * under their comp_dir: a seed's is "."): each counted once. */
static void split_files(struct ds_dso *dso)
{
	struct ds_split_files sf;
	int rc = ds_dso_split_files(dso, &sf);

	if (rc > 0 || (rc && rc != -ENODATA && rc != -ENOMEM))
		abort();
	if (rc == 0 && (sf.in_dwp + sf.in_dwo + sf.missing != sf.units || !sf.units))
		abort();
	if (rc == 0)
		free(sf.dwp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dirs[2] = {debug_dir, NULL};
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;
	uint64_t addrs[NADDR], entry;

	if (setup() != 0 || fuzz_write_file(path, data, size) != 0)
		return 0; /* the machine's fault, not the library's */
	stats.inputs++;
	addrs[0] = load64(data, size);
	addrs[1] = 0x1000;
	addrs[2] = 0;
	entry = size > 24 ? load64(data + 24, size - 24) : 0x401000;
	if (size > 4 && data[4] == 1) /* ELFCLASS32: a 4-byte e_entry */
		entry &= 0xffffffff;
	for (int i = 0; i < NSWEEP; i++)
		addrs[3 + i] = entry + 8 * (uint64_t)i - 128;
	addrs[NADDR - 1] = entry & 0xffffff; /* as a file offset */

	/* No saved indexes: the mutations of a seed share its build ID and
	 * section tables, and would map one another's index. */
	DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = "",
		.cache_path = cache_dir, .symindex = -1);
	ctx = ds_context_new(&o);
	if (!ctx)
		abort();
	store = ds_store_new(ctx, "fuzz", NULL);
	if (!store)
		abort();
	dso = ds_store_findnew(store, path, NULL);
	if (!dso)
		abort();
	symbolize(dso, addrs);
	split_files(dso);
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
	return 0;
}
