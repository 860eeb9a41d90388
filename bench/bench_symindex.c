/* SPDX-License-Identifier: MIT */
/* bench_symindex: the symbol index build alone, on the files
 * given (a binary with DWARF, or a debuginfo file):
 *   open      what any DWARF query pays first: the ELF tier (symbols,
 *             sections, segments) and the map of CUs (.debug_aranges or
 *             the CUs' top DIEs), compressed sections inflated;
 *   all, 1 thread / all cores   every CU built (ds__symbols_build_all(),
 *             as saving or a batch over most CUs does), DSOSTORE_THREADS=1
 *             and the machine's cores;
 * each the median of -r runs (5), the ratio against the 1-thread build,
 * and the DWARF read (the sizes of the sections the reader loads,
 * inflated: .debug_loclists is not among them) per second of the 1-thread build, open included.
 * The library's real code, linked statically; no store, no cache.
 * -1: one 1-thread build of each file and nothing else, no table: what a
 * profiler (perf record, valgrind --tool=callgrind) should look at.
 *
 *   bench_symindex [-r RUNS] [-q] [-1] FILE...
 */
#define _GNU_SOURCE
#include "benchutil.h"
#include "symindex.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int runs = 5;

struct row {
	double open_ms, one_ms, all_ms;
	uint64_t bytes, dwarf_bytes;
	size_t units;
};

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The DWARF a build reads: the sizes of those sections, inflated
 * (read here, not through the library). */
static uint64_t dwarf_bytes(Elf *elf)
{
	static const char *const names[] = { "info",	    "abbrev", "str",	 "line_str",
					     "str_offsets", "addr",   "ranges",	 "rnglists",
					     "line",	    "aranges" };
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || strncmp(name, ".debug_", 7))
			continue;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcmp(name + 7, names[k]))
				sum += (sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch)
					       ? ch.ch_size
					       : sh.sh_size;
	}
	return sum;
}

/* One build: open (and, with threads, every CU); times in ms. */
static void build_once(const char *path, const char *threads, double *open_ms, double *all_ms,
		       struct row *r)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	struct ds_symbols *S;
	uint64_t t0, t1, t2;
	int err;

	if (fd < 0)
		die("%s: cannot open", path);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		die("%s: not ELF", path);
	if (threads)
		setenv("DSOSTORE_THREADS", threads, 1);
	else
		unsetenv("DSOSTORE_THREADS");
	r->dwarf_bytes = dwarf_bytes(elf);
	t0 = now_ns();
	err = ds__symbols_build(NULL, elf, path, NULL, NULL, true, NULL, &S);
	t1 = now_ns();
	if (err)
		die("%s: index: %s", path, strerror(-err));
	if (all_ms) {
		err = ds__symbols_build_all(S);
		if (err)
			die("%s: building every CU: %s", path, strerror(-err));
	}
	t2 = now_ns();
	*open_ms = (double)(t1 - t0) / 1e6;
	if (all_ms)
		*all_ms = (double)(t2 - t0) / 1e6;
	r->bytes = ds__symbols_bytes(S);
	r->units = S->ncus;
	ds__symbols_free(S);
	elf_end(elf);
	close(fd);
}

static void measure(const char *path, struct row *r)
{
	double open[64], one[64], all[64], dummy;

	for (int i = 0; i < runs; i++) {
		build_once(path, NULL, &open[i], NULL, r);
		build_once(path, "1", &dummy, &one[i], r);
		build_once(path, NULL, &dummy, &all[i], r);
	}
	r->open_ms = median(open, runs);
	r->one_ms = median(one, runs);
	r->all_ms = median(all, runs);
}

int main(int argc, char **argv)
{
	int opt;
	bool once = false;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	bench_name = "bench_symindex";
	while ((opt = getopt(argc, argv, "r:qv1")) != -1) {
		if (opt == '1')
			once = true;
		else if (opt == 'r')
			runs = atoi(optarg);
		else if (opt == 'q')
			runs = 1;
		else if (opt == 'v')
			bench_verbose = true;
		else
			die("usage: bench_symindex [-r RUNS] [-q] [-1] FILE...");
	}
	if (runs < 1 || runs > 64 || optind >= argc)
		die("usage: bench_symindex [-r RUNS] [-q] [-1] FILE...");
	elf_version(EV_CURRENT);
	if (once) {
		for (int i = optind; i < argc; i++) {
			struct row r = { 0 };
			double open_ms, all_ms;

			build_once(argv[i], "1", &open_ms, &all_ms, &r);
		}
		return 0;
	}
	read_load();
	printf("symbol index build, median of %d (load %s, %ld cores)\n", runs, load_at_start,
	       cores);
	printf("%-28s %6s %10s %14s %14s %8s %10s %9s %9s\n", "file", "CUs", "open ms",
	       "all 1 thr ms", "all cores ms", "speedup", "index MB", "DWARF MB", "MB/s 1thr");
	for (int i = optind; i < argc; i++) {
		struct row r = { 0 };
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		char key[64];

		progress("%s", argv[i]);
		measure(argv[i], &r);
		double mbs = r.one_ms > 0 ? (double)r.dwarf_bytes / 1e3 / r.one_ms : 0;

		printf("%-28.28s %6zu %10.1f %14.1f %14.1f %7.2fx %10.1f %9.1f %9.0f\n", base,
		       r.units, r.open_ms, r.one_ms, r.all_ms, r.all_ms > 0 ? r.one_ms / r.all_ms : 0,
		       (double)r.bytes / 1e6, (double)r.dwarf_bytes / 1e6, mbs);
		snprintf(key, sizeof(key), "%.40s", base);
		for (char *p = key; *p; p++)
			if (*p == '.' || *p == '-')
				*p = '_';
		printf("BENCH symindex.%s.open value=%.2f unit=ms ratio=- goal_max=- met=-\n", key,
		       r.open_ms);
		printf("BENCH symindex.%s.all_1thread value=%.2f unit=ms ratio=1.00x goal_max=- "
		       "met=-\n",
		       key, r.one_ms);
		printf("BENCH symindex.%s.all_cores value=%.2f unit=ms ratio=%.2fx goal_max=- met=-\n",
		       key, r.all_ms, r.all_ms > 0 ? r.one_ms / r.all_ms : 0);
		printf("BENCH symindex.%s.mb_per_s_1thread value=%.0f unit=MB/s ratio=- goal_min=300 "
		       "met=%s\n",
		       key, mbs, mbs >= 300 ? "yes" : "no");
	}
	return 0;
}
