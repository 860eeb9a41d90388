/* SPDX-License-Identifier: MIT */
/* The unwinder (lib/live/unwind.c): user stacks of perf samples
 * (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER, perf record
 * --call-graph dwarf) unwound by libdwfl from .eh_frame / .debug_frame,
 * and the half that finds a module's files by build ID on this machine.
 * Core-file backtraces (lib/live/stack.c) answer libdwfl otherwise: from the
 * files ds_core_find_files() verified, fetched ones included.  Not
 * exported. */
#ifndef DS_UNWIND_H
#define DS_UNWIND_H

#include "dsostore.h"

#include <elfutils/libdwfl.h>

/* ---- files of libdwfl modules, found as dsostore finds them */

/* What a module's find_elf / find_debuginfo callbacks see through the
 * module's userdata (dwfl_module_info()), set as each module is
 * reported. */
struct ds__dwfl_finder {
	struct ds_context *ctx;
};

/* find_elf: the binary of the module's build ID (ds_find() of
 * DS_ARTIFACT_EXECUTABLE, the module's name as the hint);
 * find_debuginfo: its debuginfo (DS_ARTIFACT_DEBUGINFO) when that is
 * another file than the binary.  Local sources only (no network). */
extern const Dwfl_Callbacks ds__dwfl_callbacks;
/* The file to read a mapped DSO's bytes from: path itself when it is the
 * file (its build ID is bid, or bid is unknown and the caller knows path
 * is the mapped file), else what ds_find() has for bid.  malloc()ed, or
 * NULL when there is none. */
char *ds__unwind_elf_path(struct ds_context *ctx, const struct ds_build_id *bid,
			  const char *path, bool path_is_mapped);

/* ---- perf samples */

/* A map of a process as the replay has it now.  key names the DSO (the
 * same key, the same file); path is the file to read (borrowed until the
 * next call), NULL when there is none. */
struct ds__unwind_map {
	uint64_t start, end, pgoff;
	uint32_t key;
	const char *path;
};
/* The map of pid at addr: false when none. */
typedef bool (*ds__unwind_map_fn)(void *user, int32_t pid, uint64_t addr,
				  struct ds__unwind_map *out);

struct ds__unwind;

struct ds__unwind *ds__unwind_new(struct ds_context *ctx, ds__unwind_map_fn map, void *user);
void ds__unwind_free(struct ds__unwind *u);
/* The process is gone: its modules and state go too. */
void ds__unwind_exit(struct ds__unwind *u, int32_t pid);

/* One sample's user stack.  regs: perf's PERF_SAMPLE_REGS_USER values,
 * one per bit of mask (x86_64 perf register numbers), abi its abi word;
 * stack: the bytes copied from the user stack pointer (dyn_size of
 * them).  maps_gen changes whenever pid's maps did.  Writes up to max
 * addresses to ips, the sampled IP first, then each caller's return
 * address - 1 (as perf does, so that the call is looked up, not what
 * follows it); returns how many (0: no IP and stack pointer in the
 * registers, the recording is not x86_64, ...; 1, the IP, when no mapped
 * file is known at it). */
struct ds__unwind_sample {
	int32_t pid, tid;
	uint64_t abi, mask;
	const unsigned char *regs; /* popcount(mask) u64s, little-endian */
	const unsigned char *stack;
	uint64_t stack_size;
	uint64_t maps_gen;
};
size_t ds__unwind_stack(struct ds__unwind *u, const struct ds__unwind_sample *s, uint64_t *ips,
			size_t max);

/* The file to unwind a recorded [vdso] of build ID bid with: this
 * process's vDSO when it is that one (a memfd, "/proc/self/fd/N" in
 * path, kept open by u); NULL otherwise. */
const char *ds__unwind_vdso(struct ds__unwind *u, const struct ds_build_id *bid, char *path,
			    size_t len);

#endif
