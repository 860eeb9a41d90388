/* SPDX-License-Identifier: MIT */
/* The store layer's offer to the layers above: the local lookup, the
 * store's context, prefetching DSOs. */
#ifndef DS_STORE_H
#define DS_STORE_H

#include "symbolize.h"

/* ---- locate (locate.c) */

/* Search the local sources in order; *found filled on success.  why, when
 * not NULL, collects each place looked at and its verdict. */
int ds__locate(struct ds_context *ctx, const struct ds_build_id *bid, const char *hint_path,
	       enum ds_artifact what, struct ds_found *found, struct ds_strbuf *why);
/* The places a skeleton's .dwo file may be, in order, each passed to
 * try(arg, path) until it returns true: dwo_name itself when absolute,
 * else under comp_dir (when that is absolute); then, by dwo_name and by
 * its last component, in the directories of binary and of debug (either
 * may be NULL), then in each of the context's debug directories.  true:
 * try accepted one. */
bool ds__dwo_candidates(struct ds_context *ctx, const char *dwo_name, const char *comp_dir,
			const char *binary, const char *debug,
			bool (*try)(void *arg, const char *path), void *arg);
/* The places a split binary's .dwp package may be, in order, each passed
 * to try as above: <binary>.dwp, then <debug>.dwp (either may be NULL). */
bool ds__dwp_candidates(const char *binary, const char *debug,
			bool (*try)(void *arg, const char *path), void *arg);
/* ---- store (store.c) */

/* The store's context (borrowed: the store holds it). */
struct ds_context *ds__store_context(const struct ds_store *s);

/* ---- prefetch (prefetch.c) */

/* ds_store_prefetch() for a given list of DSOs (of one context): local
 * sources, then one debuginfod batch.  Returns how many are left without
 * debuginfo, or a negative error. */
/* dwarf: the dwz alt files and split DWARF the debuginfo names too. */
int ds__dsos_prefetch(struct ds_dso **dsos, size_t n, bool dwarf,
		      const struct ds_fetch_opts *opts);
/* The same with nextra requests of the caller's in the one debuginfod
 * batch (n > 0: the context is the DSOs'); each extra[i] gets its result
 * (path malloc()ed: the caller frees it). */
int ds__dsos_prefetch_with(struct ds_dso **dsos, size_t n, bool dwarf, struct ds_fetch_req *extra,
			   size_t nextra, const struct ds_fetch_opts *opts);

/* ---- disasm (disasm.c) */

/* size bytes of code of ELF machine (EM_X86_64, EM_386, EM_AARCH64)
 * decoded at start: the instructions of a ds_disasm with no lines, no
 * names, no samples, jumps' landings marked; every byte in exactly one
 * instruction (bytes capstone cannot decode are DS_INSN_BAD ones).  0;
 * -ENOTSUP another machine; -EINVAL size 0, over the limit, or wrapping;
 * -ENOMEM.  For ds_dso_disassemble() and the fuzz harness. */
int ds__disasm_bytes(unsigned machine, const uint8_t *code, size_t size, uint64_t start,
		     struct ds_disasm **out);
/* The length of the x86-64 VEX or EVEX instruction at p (n bytes), its
 * kind in *kind ("(vex)", "(evex)"); 0: none. */
size_t ds__x86_vex_len(const uint8_t *p, size_t n, const char **kind);

#endif
