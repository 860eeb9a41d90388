/* The call graphs of dsostore report (-g): perf report --stdio's, drawn
 * under each row from the library's call trees (ds_calltree). */
#ifndef DS_CALLGRAPH_H
#define DS_CALLGRAPH_H

#include "dsostore.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cg_mode { CG_GRAPH, CG_FRACTAL, CG_FLAT, CG_FOLDED, CG_NONE };
enum cg_value { CG_PERCENT, CG_PERIOD, CG_COUNT };

/* What -g says (perf's callchain_param, as far as it is supported). */
struct cg_opts {
	enum cg_mode mode;
	enum cg_value value;
	int order; /* 1: caller, 0: callee, -1: perf's default (caller with children) */
	double min_percent; /* the threshold, percent */
	unsigned long print_limit; /* entries per level; 0: all */
	long max_stack; /* perf's --max-stack; -1: none given */
};

#define CG_OPTS_DEFAULT { .mode = CG_GRAPH, .value = CG_PERCENT, .order = -1, .min_percent = 0.5, .max_stack = -1 }

/* Apply a -g argument ("graph,0.5,caller", any order, perf's prefixes);
 * NULL: perf's default for a bare -g.  0; -1 when it is no -g argument
 * (an error printed unless quiet, o unchanged). */
int cg_parse(struct cg_opts *o, const char *arg, bool quiet);

/* The row (below nrows) that stack `stack` of the profile counts for: own,
 * the sample's own row; else that of frame `frame` of perf's callchain
 * (the stack's locations: frame 0 the callchain's copy of the sampled
 * address, perf's caller entry of it).  SIZE_MAX: not this table's. */
typedef size_t (*cg_row_fn)(void *user, size_t stack, size_t frame, bool own);

/* The graphs of one table: its rows' call trees, each of the stacks that
 * are the row's (with children, also of those passing through it, from
 * the row's frame on).  Exits on ENOMEM. */
struct callgraph *callgraph_new(const struct ds_profile *p, const struct cg_opts *o,
				bool children, size_t nrows, cg_row_fn row_of, void *user);
void callgraph_free(struct callgraph *g);

/* Under a row, on stdout: parent: the row's period (its Children period
 * with children); total: the event's.  sym_first: the sort keys start
 * with sym (perf then leaves out a single chain's first entry). */
void callgraph_print(struct callgraph *g, size_t row, uint64_t parent, uint64_t total,
		     bool sym_first);
/* ,"callchain":[...]: the row's tree as nested nodes, pruned as drawn,
 * shares of the event's total. */
void callgraph_json(struct callgraph *g, size_t row, uint64_t total);

#endif
