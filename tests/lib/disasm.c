/* SPDX-License-Identifier: MIT */
/*
 * ds_disasm FILE ADDR: a helper of the shell tests (not a test).
 * Disassembles the function at ADDR (hex, a virtual address; its size its
 * ELF symbol's) of FILE with ds_dso_disassemble(), in a fresh context and
 * store that look in no debug directory and ask no server, and prints one
 * line per instruction:
 *   ADDR MNEMONIC [-> TARGET [LABEL]] [@LANDING]
 * (TARGET hex when the branch's target is known; "inside" when it is an
 * instruction of the function; "@L" on an instruction a jump lands on),
 * then "arch ARCH size SIZE".  On failure: "error: MESSAGE" on stderr,
 * exit 1.
 */
#define _GNU_SOURCE
#include <dsostore.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	static const char *const no_dirs[] = { NULL };
	DS_OPTS(ds_context_opts, o, .debug_dirs = no_dirs, .perf_buildid_dir = "", .urls = "",
		.symindex = -1);
	struct ds_context *ctx;
	struct ds_store *s;
	struct ds_dso *d;
	struct ds_disasm *dis = NULL;
	struct ds_disasm_info info;
	const struct ds_insn *in;
	size_t n;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: ds_disasm FILE ADDR\n");
		return 2;
	}
	ctx = ds_context_new(&o);
	s = ctx ? ds_store_new(ctx, "host", NULL) : NULL;
	d = s ? ds_store_findnew(s, argv[1], NULL) : NULL;
	if (!d) {
		fprintf(stderr, "error: cannot make a store\n");
		return 1;
	}
	err = ds_dso_disassemble(d, strtoull(argv[2], NULL, 16), NULL, &dis);
	if (err) {
		fprintf(stderr, "error: %s\n", ds_strerror(err));
	} else {
		n = ds_disasm_insns(dis, &in);
		for (size_t i = 0; i < n; i++) {
			printf("%" PRIx64 " %s", in[i].addr, in[i].mnemonic);
			if (in[i].flags & DS_INSN_TARGET)
				printf(" -> %" PRIx64 "%s", in[i].target,
				       (in[i].flags & DS_INSN_INSIDE) ? " inside" : "");
			printf("%s%s%s%s\n", (in[i].flags & DS_INSN_LANDING) ? " @L" : "",
			       (in[i].flags & DS_INSN_JUMP) ? " jump" : "",
			       (in[i].flags & DS_INSN_CALL) ? " call" : "",
			       (in[i].flags & DS_INSN_RET) ? " ret" : "");
		}
		ds_disasm_info(dis, &info);
		printf("arch %s size %" PRIu64 "\n", info.arch, info.size);
	}
	ds_disasm_free(dis);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
	return err ? 1 : 0;
}
