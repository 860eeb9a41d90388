/* SPDX-License-Identifier: MIT */
/*
 * The normalizer's cache (lib/live/normalize.c) on this very process: its maps
 * are read once, again on a miss and after ds_normalizer_invalidate(), and
 * not otherwise (an unmapped range keeps its old answer until the caller
 * says it changed).  Expected values from first principles: a file mapped
 * here with mmap() at a known offset gives that offset back, the build ID
 * of /proc/self/exe as the ELF note reads (ds_build_id_read_file is
 * tested against eu-readelf in test_buildid), the virtual address of a
 * function of ours through our own program headers (dl_iterate_phdr), and
 * the reasons of kernel, unmapped, heap and the vDSO.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) int t_marker(int x)
{
	return x * 7 + 1;
}

static int bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr; /* the first: the executable */
	return 1;
}

int main(void)
{
	struct ds_context *ctx = ds_context_new(NULL);
	struct ds_store *store = t_store_new(ctx, 0);
	struct ds_normalizer *n;
	struct ds_norm_addr o[4];
	struct ds_build_id self;
	uint64_t bias = 0, a[4];
	long page = sysconf(_SC_PAGESIZE);
	int fd;
	char *m, *heap = malloc(64);

	CHECK(ds_build_id_read_file("/proc/self/exe", &self) == 0);
	dl_iterate_phdr(bias_cb, &bias);
	n = ds_normalizer_new(store, getpid(), NULL);
	CHECK(n != NULL);
	if (!n)
		return 1;

	/* Our own function: build ID, vaddr = address - load bias. */
	a[0] = (uint64_t)(uintptr_t)&t_marker;
	a[1] = 0xffffffff81000000ull;
	a[2] = 16; /* page 0: never mapped */
	a[3] = (uint64_t)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	CHECK(ds_normalize(n, a, 4, o) >= 1);
	CHECK_EQ_INT(o[0].reason, DS_NORM_OK);
	CHECK(t_same_bid(&o[0].build_id, &self));
	CHECK(o[0].vaddr_known && o[0].vaddr == a[0] - bias);
	CHECK(o[0].dso != NULL);
	CHECK_EQ_INT(o[1].reason, DS_NORM_KERNEL);
	CHECK_EQ_INT(o[2].reason, DS_NORM_UNMAPPED);
	if (a[3]) {
		CHECK_EQ_INT(o[3].reason, DS_NORM_OK);
		CHECK(o[3].path && !strcmp(o[3].path, "[vdso]"));
		CHECK(o[3].vaddr_known);
	}
	ds_norm_release(o, 4);
	CHECK(o[0].dso == NULL);

	/* A file mapped after the normalizer read the maps: a miss, so the
	 * maps are read again, and its offset comes back. */
	fd = open("/proc/self/exe", O_RDONLY);
	m = fd >= 0 ? mmap(NULL, 2 * page, PROT_READ, MAP_PRIVATE, fd, page) : MAP_FAILED;
	CHECK(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		a[0] = (uint64_t)(uintptr_t)m + 100;
		CHECK_EQ_INT(ds_normalize(n, a, 1, o), 1);
		CHECK_EQ_INT(o[0].reason, DS_NORM_OK);
		CHECK_EQ_INT(o[0].file_offset, page + 100);
		CHECK(t_same_bid(&o[0].build_id, &self));
		ds_norm_release(o, 1);
		/* Unmapped: cached, the old answer stands (no re-read on a
		 * hit) until the caller says the process mapped. */
		munmap(m, 2 * page);
		CHECK_EQ_INT(ds_normalize(n, a, 1, o), 1);
		ds_norm_release(o, 1);
		ds_normalizer_invalidate(n, DS_NORM_MAPPED);
		CHECK_EQ_INT(ds_normalize(n, a, 1, o), 0);
		CHECK_EQ_INT(o[0].reason, DS_NORM_UNMAPPED);
		ds_norm_release(o, 1);
	}
	if (fd >= 0)
		close(fd);

	/* Anonymous memory: the heap (no perf map here). */
	a[0] = (uint64_t)(uintptr_t)heap;
	ds_normalize(n, a, 1, o);
	CHECK(o[0].reason == DS_NORM_ANON || o[0].reason == DS_NORM_UNMAPPED);
	ds_norm_release(o, 1);
	/* exec: files forgotten, answers the same. */
	ds_normalizer_invalidate(n, DS_NORM_EXEC);
	a[0] = (uint64_t)(uintptr_t)&t_marker;
	CHECK_EQ_INT(ds_normalize(n, a, 1, o), 1);
	CHECK(o[0].vaddr == a[0] - bias);
	ds_norm_release(o, 1);

	CHECK_EQ_INT(ds_normalize(NULL, a, 1, o), -EINVAL);
	CHECK_EQ_INT(ds_normalize(n, NULL, 1, o), -EINVAL);
	CHECK(ds_normalizer_new(store, 0, NULL) == NULL && errno == EINVAL);
	CHECK(ds_normalizer_new(store, 0x7ffffff0, NULL) == NULL && errno == ESRCH);
	CHECK(!strcmp(ds_norm_reason_name(DS_NORM_JIT), "jit"));

	ds_normalizer_free(n);
	ds_store_free(store);
	ds_context_free(ctx);
	free(heap);
	return t_failures ? 1 : 0;
}
