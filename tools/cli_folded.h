/* Collapsed ("folded") stacks: one line per distinct stack, its frames
 * root first and separated by ';', then a space and its count, the input
 * of flamegraph.pl, inferno and speedscope.  Made from a recording's
 * profile the way `perf script | stackcollapse-perf.pl` makes them (see
 * folded_from_profile()), or read back from such text; written by `report
 * --folded`, drawn by `flamegraph`. */
#ifndef DS_FOLDED_H
#define DS_FOLDED_H

#include "cli.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The options of report --folded and flamegraph that shape the stacks. */
struct folded_opts {
	bool on; /* report --folded */
	const char *out; /* -o FILE; NULL: stdout */
	bool period; /* --count period: add up sample periods, not samples */
	bool comm_pid, comm_tid; /* root frame "comm-PID", "comm-PID/TID" */
	bool ann_kernel; /* --annotate kernel: "_[k]" after kernel functions */
	bool ann_dso; /* --annotate dso: "DSO`function" */
	const char *event; /* --event NAME; NULL: the first sample's */
	/* --max-stack N: callchain entries kept, from the sample (as perf
	 * script keeps them); without it, the recording's default
	 * (struct cli_recording's max_stack) */
	bool max_stack_set;
	size_t max_stack;
	/* The first option seen that shapes the stacks (not --folded): report
	 * refuses it without --folded rather than ignore it. */
	const char *given;
};

/* The ids of the options above, in report's and flamegraph's tables:
 * those of folded_opts_stacks, then the ones each command lists itself
 * (--max-stack, with help of its own; report's --folded and -o). */
enum {
	FOLDED_O_COUNT = 900,
	FOLDED_O_COMM_PID,
	FOLDED_O_COMM_TID,
	FOLDED_O_ANNOTATE,
	FOLDED_O_EVENT,
	FOLDED_O_MAX_STACK,
	FOLDED_O_FOLDED,
	FOLDED_O_OUTPUT,
};
extern const struct cli_opt folded_opts_stacks[];
/* The option id with its argument v applied to o: 1; 0 if id is none of
 * them; CLI_BAD after printing why. */
int folded_option(struct folded_opts *o, int id, const char *v);

/* A set of stacks: frame names interned, each distinct stack once. */
struct folded {
	char **names; /* by id */
	uint32_t *name_len;
	size_t nnames, namecap;
	size_t *name_slots, nname_slots; /* hash: id + 1, 0 empty */
	struct fstack {
		size_t off; /* frames: pool[off .. off + n), root first */
		uint32_t n;
		uint64_t count;
	} *v;
	size_t n, cap;
	uint32_t *pool;
	size_t npool, poolcap;
	size_t *slots, nslots; /* hash of stacks: index + 1, 0 empty */
	uint64_t total; /* the sum of the counts */
	const char *unit; /* "samples" or "period" (a static string) */
	char *event; /* the event the stacks are of; NULL: not known */
	size_t skipped; /* samples of other events; lines of text not read */
};

void folded_init(struct folded *f);
void folded_free(struct folded *f);
/* The id of a frame name (copied); -1 with errno ENOMEM. */
int64_t folded_name(struct folded *f, const char *s, size_t len);
/* Add count to the stack of n frame ids, root first.  0, -ENOMEM. */
int folded_add(struct folded *f, const uint32_t *frames, uint32_t n, uint64_t count);
/* The stacks' indexes in f->v, ordered by their frames (each frame by
 * strcmp, a stack before those it is a prefix of: the left-to-right order
 * of a flame graph, where a caller's callees are next to each other), or
 * as_lines, as the lines' bytes (stackcollapse-perf.pl's order, that of
 * `LC_ALL=C sort`).  malloc()ed; NULL with errno. */
size_t *folded_sorted(const struct folded *f, bool as_lines);
/* The lines, in the order of their bytes.  0, or -errno of the write. */
int folded_write(const struct folded *f, FILE *out);

/* Read folded text (what folded_write() writes; flamegraph.pl's input):
 * "FRAME;FRAME;... COUNT" lines.  Lines that are not of that form are
 * counted in f->skipped, not read.  0; -ENOMEM; -EFBIG past the limits
 * (more than FOLDED_MAX_FRAMES frames in a stack); a count past
 * 2^64 - 1 makes a line that is no stack. */
#define FOLDED_MAX_FRAMES 65536
int folded_parse(struct folded *f, const char *text, size_t len);

/* The stacks of a recording, as stackcollapse-perf.pl makes them of `perf
 * script`'s output (see cli_folded.c).  path: the perf.data; no_fetch: local
 * debuginfo only; progress as cli_want_progress().  0, or 1 after a
 * message (the recording cannot be read, or has no samples of the
 * event). */
int folded_of_recording(struct folded *f, const char *path, const struct cli_common *common,
			const struct folded_opts *o, bool no_fetch, bool progress);

/* report --folded: the stacks of path, written to o->out (or stdout;
 * cli_output_open(), note its).  The exit status. */
int folded_report(const struct folded_opts *o, const char *path, const char *note,
		  const struct cli_common *common, bool no_fetch, bool progress);

#endif
