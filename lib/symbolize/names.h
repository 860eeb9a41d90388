/* SPDX-License-Identifier: MIT */
/*
 * Name spelling and demangling (names.c): a symbol's name as binutils,
 * LLVM or perf print it.  The batch queries (symbolize.c) call these and
 * keep what they give; names.c needs nothing of the batch.
 */
#ifndef DS_SYMBOLIZE_NAMES_H
#define DS_SYMBOLIZE_NAMES_H

#include <stdbool.h>

/* Whether s may be a name cplus_demangle() demangles ("auto" style). */
bool ds__maybe_mangled(const char *s);
/* s as binutils' bfd_demangle() gives it, with libiberty's DMGL_* opts;
 * malloc()ed, NULL: not a mangled name, or no memory. */
char *ds__demangle_gnu(const char *s, int opts);
/* s as llvm-symbolizer 14 prints it; malloc()ed, NULL: not demangled, or
 * no memory. */
char *ds__demangle_llvm(const char *s);

#endif
