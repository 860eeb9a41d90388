/* SPDX-License-Identifier: MIT */
/*
 * A process's absolute addresses to names in one call:
 *
 *   symbolize_pid [-d DEBUG-DIR] PID ADDR...
 *
 * ds_symbolize_pid() normalizes them, groups them by DSO, finds every
 * DSO's debuginfo at once and answers in input order, inline frames
 * included, innermost first; an address it cannot name says why:
 *
 *   0x55d0c2a011b4 sq /src/main.c:4 (inlined into work /src/main.c:5)
 *   0x10 [in no mapping of the process]
 *
 * (agent.c shows the pieces underneath: the normalized build ID and file
 * offset an agent sends to a symbolization service.)
 *
 * Build: cc symbolize_pid.c $(pkg-config --cflags --libs dsostore)
 */
#include <dsostore.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *dirs[3] = { "/usr/lib/debug", NULL, NULL };
	DS_OPTS(ds_context_opts, co, .debug_dirs = dirs);
	struct ds_context *ctx;
	struct ds_store *store = NULL;
	struct ds_sym_batch *batch = ds_sym_batch_new();
	const struct ds_sym_answer *ans;
	uint64_t *addrs;
	size_t n, na;
	int rc;

	if (argc > 2 && !strcmp(argv[1], "-d")) { /* more debuginfo, by build ID */
		dirs[0] = argv[2];
		dirs[1] = "/usr/lib/debug";
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: symbolize_pid [-d DEBUG-DIR] PID ADDR...\n");
		return 2;
	}
	n = (size_t)argc - 2;
	addrs = calloc(n, sizeof(*addrs));
	for (size_t i = 0; addrs && i < n; i++)
		addrs[i] = strtoull(argv[i + 2], NULL, 16);
	ctx = ds_context_new(&co);
	if (ctx)
		store = ds_store_new(ctx, "host", NULL);
	if (!addrs || !store || !batch) {
		perror("symbolize_pid");
		return 1;
	}

	rc = ds_symbolize_pid(store, atoi(argv[1]), addrs, n, DS_SYM_INLINES | DS_SYM_DEMANGLE,
			      batch);
	ans = ds_sym_batch_answers(batch, &na);
	if (na != n) {
		fprintf(stderr, "symbolize_pid: %s\n", ds_strerror(rc));
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		printf("0x%" PRIx64, addrs[i]);
		if (!ans[i].nframes)
			printf(" [%s]", ds_sym_reason_name(ans[i].reason));
		for (uint32_t f = 0; f < ans[i].nframes; f++) {
			const struct ds_frame *fr = &ans[i].frames[f];

			printf("%s%s %s:%u%s", f ? " (inlined into " : " ",
			       fr->function ? fr->function : "??", fr->file ? fr->file : "??",
			       fr->line, f ? ")" : "");
		}
		putchar('\n');
	}
	ds_sym_batch_free(batch);
	ds_store_free(store);
	ds_context_free(ctx);
	free(addrs);
	return 0;
}
