/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for annotate's disassembly (lib/store/disasm.c,
 * ds__disasm_bytes()): the code bytes of a binary a debuginfod server may
 * have sent, through capstone and our own steps around it (the length of a
 * VEX/EVEX instruction capstone 4 cannot decode, objdump's spellings, jump
 * landings).
 *
 * The first byte picks the machine (x86-64, i386, AArch64, or one without
 * a disassembler, which must be refused with -ENOTSUP), the rest is code at
 * 0x401000.  What is decoded must hold the contract: every byte in exactly
 * one instruction, in order, none empty; a jump marked as landing inside
 * lands on an instruction's first byte, which is marked as a landing, and
 * no instruction is a landing without such a jump; strings are set.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "store.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static unsigned long inputs, insns, bad;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_disasm: %lu inputs, %lu instructions, %lu undecodable\n", inputs,
		insns, bad);
}

static const unsigned machines[] = { EM_X86_64, EM_386, EM_AARCH64, EM_RISCV };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint64_t start = 0x401000;
	struct ds_disasm *d = NULL;
	const struct ds_insn *in;
	const char *kind = NULL;
	unsigned machine;
	size_t n, landings = 0, lands = 0;
	uint64_t at = start;
	int err;

	if (size < 1)
		return 0;
	machine = machines[data[0] % 4];
	data++;
	size--;
	inputs++;
	if (ds__x86_vex_len(data, size, &kind) > size)
		abort();
	err = ds__disasm_bytes(machine, data, size, start, &d);
	if (machine == EM_RISCV) {
		if (err != -ENOTSUP || d)
			abort();
		return 0;
	}
	if (!size) {
		if (err != -EINVAL || d)
			abort();
		return 0;
	}
	if (err || !d)
		abort();
	n = ds_disasm_insns(d, &in);
	for (size_t i = 0; i < n; i++) {
		if (in[i].addr != at || !in[i].size || in[i].size > 15 || !in[i].mnemonic ||
		    !in[i].operands || in[i].file || in[i].samples)
			abort();
		at += in[i].size;
		if (in[i].flags & DS_INSN_BAD)
			bad++;
		if (in[i].flags & DS_INSN_LANDING)
			landings++;
		if ((in[i].flags & DS_INSN_INSIDE) && (in[i].flags & DS_INSN_JUMP)) {
			uint64_t t = in[i].target;
			size_t lo = 0, hi = n;

			if (!(in[i].flags & DS_INSN_TARGET) || t < start || t - start >= size)
				abort();
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (in[mid].addr < t)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == n || in[lo].addr != t || !(in[lo].flags & DS_INSN_LANDING))
				abort();
			lands++;
		}
	}
	if (at != start + size || (landings && !lands) || landings > lands)
		abort();
	insns += n;
	ds_disasm_free(d);
	return 0;
}
