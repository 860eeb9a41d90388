/* SPDX-License-Identifier: MIT */
/*
 * What a profiling agent does with dsostore, in one page:
 *
 *   agent [-d DEBUG-DIR] PID ADDR...
 *
 * ADDR are absolute addresses of process PID (hex), as a sampler (perf
 * events, an eBPF stack map) captures them.  Each is normalized to (build
 * ID, file offset, ELF virtual address), what an agent would send to a
 * symbolization service, and then symbolized here, inline frames
 * included, innermost first:
 *
 *   0x55d0c2a011b4 78bad576...+0x11b4 sq /src/main.c:4 (inlined into work /src/main.c:5)
 *
 * Build: cc agent.c $(pkg-config --cflags --libs dsostore)
 */
#include <dsostore.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct ds_context *ctx = NULL;
	struct ds_store *store = NULL;
	struct ds_normalizer *norm = NULL;
	struct ds_sym_batch *batch = NULL;
	struct ds_norm_addr *out = NULL;
	uint64_t *addrs = NULL;
	const char *dirs[2] = { "/usr/lib/debug", NULL };
	DS_OPTS(ds_context_opts, co, .debug_dirs = dirs);
	size_t n;
	int status = 1;

	if (argc > 2 && !strcmp(argv[1], "-d")) { /* where debuginfo is, by build ID */
		dirs[0] = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: agent [-d DEBUG-DIR] PID ADDR...\n");
		return 2;
	}
	n = (size_t)argc - 2;
	addrs = calloc(n, sizeof(*addrs));
	out = calloc(n, sizeof(*out));
	for (size_t i = 0; addrs && i < n; i++)
		addrs[i] = strtoull(argv[i + 2], NULL, 16);

	/* One context (configuration: debug dirs, debuginfod from the
	 * environment), one store (this machine's DSOs), one normalizer per
	 * process: it caches the process's maps between calls. */
	ctx = ds_context_new(&co);
	store = ctx ? ds_store_new(ctx, "host", NULL) : NULL;
	norm = store ? ds_normalizer_new(store, atoi(argv[1]), NULL) : NULL;
	batch = ds_sym_batch_new();
	if (!addrs || !out || !norm || !batch) {
		perror("agent");
		goto out;
	}
	if (ds_normalize(norm, addrs, n, out) < 0)
		goto out;
	/* Optional: every DSO's debuginfo found (locally, else one parallel
	 * debuginfod batch) before the first lookup. */
	ds_store_prefetch(store, NULL);

	for (size_t i = 0; i < n; i++) {
		const struct ds_norm_addr *a = &out[i];
		const struct ds_sym_answer *ans;
		char hex[2 * DS_BUILD_ID_MAX + 1];
		size_t na;

		printf("0x%" PRIx64, a->addr);
		if (a->reason == DS_NORM_JIT) {
			printf(" [jit] %s\n", a->jit_name);
			continue;
		}
		if (a->reason != DS_NORM_OK || !a->vaddr_known) {
			printf(" [%s]\n", ds_norm_reason_name(a->reason));
			continue;
		}
		ds_build_id_format(&a->build_id, hex, sizeof(hex));
		printf(" %s+0x%" PRIx64, hex, a->file_offset);
		/* A batch of one here; an agent passes all of a DSO's addresses
		 * at once (they are sorted and looked up together). */
		ds_dso_symbolize_batch(a->dso, &a->vaddr, 1, DS_SYM_INLINES | DS_SYM_DEMANGLE,
				       batch);
		ans = ds_sym_batch_answers(batch, &na);
		if (na != 1 || ans[0].status != DS_SYM_FOUND) {
			printf(" ??\n");
			continue;
		}
		for (uint32_t f = 0; f < ans[0].nframes; f++) {
			const struct ds_frame *fr = &ans[0].frames[f];

			printf("%s%s %s:%u%s", f ? " (inlined into " : " ",
			       fr->function ? fr->function : "??", fr->file ? fr->file : "??",
			       fr->line, f ? ")" : "");
		}
		putchar('\n');
	}
	status = 0;
out:
	ds_norm_release(out, n);
	free(out);
	free(addrs);
	ds_sym_batch_free(batch);
	ds_normalizer_free(norm);
	ds_store_free(store);
	ds_context_free(ctx);
	return status;
}
