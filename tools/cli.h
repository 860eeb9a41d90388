/* Shared bits of the dsostore subcommands.  The tool uses only the public
 * API in include/dsostore.h. */
#ifndef DS_CLI_H
#define DS_CLI_H

#include "dsostore.h"

#include "cli_opts.h"

#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

/* The options tables share (cli_opts.h), as cli_next() sets them. */
struct cli_common {
	const char *debug_dirs[33];
	int n_debug_dirs;
	const char *perf_buildid_dir;
	const char *kallsyms, *kernel_root; /* ds_context_opts' */
	const char *vmlinux; /* -k: the kernel's vmlinux (symbolize, report, annotate) */
	int verbose;
	/* -i/--input, --no-fetch; progress: --progress (1), --no-progress
	 * (0), else -1 (see cli_want_progress()) */
	const char *input;
	bool no_fetch;
	int progress;
};

/* SIGINT and SIGTERM (tools/cli_common.c): cli_signals_install() makes
 * them (unless ignored when the process started) set cli_interrupted to
 * their number, which every context of cli_context() takes as its cancel
 * flag (ds_context_opts.cancel): what is in flight fails with -ECANCELED
 * and removes its temporary files, the command unwinds (an output is not
 * renamed into place: cli_output_close()), and main() exits with 128 +
 * the number.  A second one kills as the default does. */
extern volatile sig_atomic_t cli_interrupted;
void cli_signals_install(void);
/* Ends a progress line cli_progress() left open (a newline), so that what
 * follows on stderr starts a line of its own; cli_error() calls it. */
void cli_progress_end(void);

/* A file a command writes (tools/cli_output.c says the rules): f to
 * write to, name for messages. */
struct cli_output {
	FILE *f;
	const char *name; /* as given, or "stdout" */
	char *tmp, *target; /* the temporary file and the name it replaces */
};
/* Open path ("-" or NULL: stdout) as the output of option opt of command
 * cmd, refused when it is one of the ninputs files inputs (NULLs
 * skipped; "-": the file stdin reads) — note, when not NULL, ends that
 * message.  0, or the exit
 * status (2: refused, 1: cannot) after saying why. */
int cli_output_open(struct cli_output *o, const char *cmd, const char *opt, const char *path,
		    const char *const *inputs, size_t ninputs, const char *note);
/* Flush and close it; with ok (what was written is whole) and no error
 * and no SIGINT/SIGTERM, the file is renamed into place, else removed and
 * the old one left.  0, or 1 after saying why. */
int cli_output_close(struct cli_output *o, bool ok);

/* A context configured from the common options; exits on failure. */
struct ds_context *cli_context(const struct cli_common *c);
/* A message on stderr, "dsostore: " and a line.  A message is one line and
 * quotes inputs (paths, names, a server's words): all of it is escaped
 * (cli_vwrite()), a newline in it too. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fmt's text written to f through ds_term_write(). */
void cli_vwrite(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* s as a JSON string on stdout (quotes, backslashes and control characters
 * escaped); NULL as null. */
void cli_json_string(const char *s);
/* s, a string from an input (a comm, a path, a symbol, a JIT name, a
 * message quoting one), as text a terminal can trust (ds_term_escape(),
 * docs/output.md): s itself when nothing in it needs escaping, else its
 * escaped form in one of CLI_T_SLOTS buffers taken in turn, good until as
 * many more calls.  NULL stays NULL; exits when out of memory.  Every
 * input's string printed as text goes through it (JSON and SVG have
 * their own escaping, on the raw string). */
#define CLI_T_SLOTS 8
const char *cli_t(const char *s);
/* "1.5 MiB" */
void cli_human(double bytes, char *buf, size_t len);
/* A ds_fetch_progress_fn drawing one line on stderr. */
int cli_progress(void *user, const struct ds_fetch_progress *p);
/* Whether to draw it: --progress (1), --no-progress (0), else (-1) when
 * stderr is a terminal or $DEBUGINFOD_PROGRESS is set. */
bool cli_want_progress(int option);
/* madvise(advice) over the whole pages (of page bytes, a power of two)
 * inside [p, p + len); nothing when there are none.  A hint: errors (an
 * older kernel's EINVAL) are not reported. */
void cli_advise_pages(void *p, size_t len, size_t page, int advice);

/* A perf recording opened for a command (tools/cli_recording.c): replayed
 * straight into a profile (ds_profile_open(): the samples are not kept
 * twice), its session borrowed from it. */
struct cli_recording {
	const char *path;
	struct ds_perf_data *pd;
	struct ds_context *ctx;
	struct ds_profile *prof;
	struct ds_perf_session *s;
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	bool lines; /* the profile reads DWARF (DS_PROFILE_LINES) */
	/* perf's --max-stack for it: the one given to cli_recording_open(),
	 * else this machine's kernel.perf_event_max_stack (perf's
	 * sysctl__max_stack(), 127 where it cannot be read), what report and
	 * script cut callchains at and dwarf stacks are unwound to */
	size_t max_stack;
};
/* Open the recording at path, make a context from the common options (no
 * debuginfod servers with no_fetch) and replay it into a profile made
 * with po; a --call-graph dwarf sample's user stack unwound to unwind_max
 * frames (perf's --max-stack; 0: the sysctl's, see max_stack).  0, or 1 (the
 * exit status) after saying why on stderr; cli_recording_close() either
 * way. */
int cli_recording_open(struct cli_recording *r, const char *path, const struct cli_common *c,
		       bool no_fetch, const struct ds_profile_opts *po, size_t unwind_max);
/* The sampled DSOs' debuginfo, locally then in one debuginfod batch
 * (ds_perf_session_prefetch()), with a progress bar when progress; with
 * verbose, a line for each sampled DSO left without it.  Then the
 * profile's locations are named (ds_profile_resolve()): 0, or 1 after
 * saying why. */
int cli_recording_prefetch(struct cli_recording *r, bool progress, bool verbose);
void cli_recording_close(struct cli_recording *r);
/* report --pprof (tools/cli_pprof.c): the recording at data_path, its debuginfo
 * found first (not fetched with no_fetch), written as pprof's
 * profile.proto, gzipped, to out ("-": stdout; cli_output_open(), note
 * its).  The exit status: 0, or 1 (2: out is the recording) after saying
 * why. */
int pprof_report(const char *out, const char *data_path, const char *note,
		 const struct cli_common *common, bool no_fetch, bool progress);

/* binutils addr2line's personality (tools/cmd_addr2line.c), answered by
 * symbolize's -e mode.  addr2line reads stdin with fgets() into 100
 * bytes: a line is cut into pieces of at most A2L_CHUNK bytes.  What
 * both read addresses and names with is in tools/cli_a2l.c. */
#define A2L_CHUNK 99
struct cli_a2l {
	const char *exe;
	bool functions, inlines, demangle, addresses, pretty, basenames;
	/* -j: addresses are offsets into a section at sec_vma, of sec_size
	 * bytes (0 unless it takes memory: bfd answers in no other). */
	bool section, sec_alloc;
	uint64_t sec_vma, sec_size;
};
/* An address of the file at path as addr2line reads one from s[0..len):
 * hex (0x optional, all ones past 64 bits) or SYMBOL[+OFFSET]; 0 for
 * anything else.  a2l_symbols_close() closes what a symbol took open. */
uint64_t a2l_scan_addr(const char *path, const char *s, size_t len);
void a2l_symbols_close(void);
/* binutils' naming of a function after it was asked about (see
 * tools/cli_a2l.c): note the name the function starting at start was
 * given as the innermost frame; a2l_renamed(): the name noted, or NULL;
 * a2l_renamed_free() forgets all. */
void a2l_note_function(uint64_t start, const char *name, size_t len);
const char *a2l_renamed(uint64_t start);
void a2l_renamed_free(void);
/* The hex digits addr2line -a prints for path's addresses: 8 for an ELF32
 * file, else 16. */
unsigned a2l_addr_width(const char *path);
/* --demangle=STYLE: false for a style binutils does not know; else
 * *demangle says whether names are demangled ("none": not). */
bool a2l_demangle_style(const char *style, bool *demangle);
/* Whether binutils knows t as a target an ELF file may be read as (-b). */
bool a2l_known_target(const char *t);
/* Answers addrs (stdin's lines when naddrs is 0) of a->exe as binutils
 * addr2line does; the exit status. */
int symbolize_addr2line(const struct cli_a2l *a, char **addrs, int naddrs);
/* The commands (tools/cmd_<command>.c). */
extern const struct cli_command cli_cmd_buildid;
extern const struct cli_command cli_cmd_find;
extern const struct cli_command cli_cmd_metadata;
extern const struct cli_command cli_cmd_scan;
extern const struct cli_command cli_cmd_fetch;
extern const struct cli_command cli_cmd_cache;
extern const struct cli_command cli_cmd_symbolize;
extern const struct cli_command cli_cmd_normalize;
extern const struct cli_command cli_cmd_addr2line;
extern const struct cli_command cli_cmd_index;
extern const struct cli_command cli_cmd_buildid_list;
extern const struct cli_command cli_cmd_prefetch;
extern const struct cli_command cli_cmd_report;
extern const struct cli_command cli_cmd_annotate;
extern const struct cli_command cli_cmd_perf_cache;
extern const struct cli_command cli_cmd_flamegraph;
extern const struct cli_command cli_cmd_stack;
extern const struct cli_command cli_cmd_serve;

/* symbolize's addresses of live processes (tools/cli_pid.c): key
 * "pid:PID" (or NULL and pid) and an absolute address, normalized by a
 * normalizer of that process kept to cli_pid_done().  0: dso (a
 * reference for the caller) and addr (its ELF virtual address, or with
 * file_offset the file offset), or is_jit and jit (the perf map's name);
 * else a negative errno and error.  module: the mapping's path. */
struct cli_pid_answer {
	struct ds_dso *dso;
	uint64_t addr;
	bool is_jit;
	char jit[512];
	char module[4096];
	char error[256];
};
int cli_pid_address(struct ds_store *store, const char *key, int pid, uint64_t addr,
		    bool file_offset, struct cli_pid_answer *a);
void cli_pid_done(void);
/* A process ID, decimal, in s: true and *pid. */
bool cli_parse_pid(const char *s, int *pid);
/* "SIZE" as bytes: a decimal number, a K, M or G (KiB, MiB, GiB) after it
 * allowed; false for anything else, or past 2^64. */
bool cli_parse_size(const char *v, uint64_t *out);

#endif
