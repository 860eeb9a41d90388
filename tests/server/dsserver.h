/* dsserver: a debuginfod-compatible HTTP server for tests, with injectable
 * faults.  Shared declarations of its three parts: the build-ID index
 * (index.c), the fault rules (fault.c), the HTTP side (http.c) and
 * main (dsserver.c). */
#ifndef DSSERVER_H
#define DSSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest build ID accepted, in hex digits (elfutils accepts up to 256). */
#define BID_HEX_MAX 256

enum artifact { ART_DEBUGINFO, ART_EXECUTABLE, ART_SOURCE, ART_SECTION };

/* A range of a file to serve. */
struct served {
	char *path; /* malloc'd, absolute */
	uint64_t off;
	uint64_t size; /* UINT64_MAX: the whole file */
};

/* index.c */
int index_set_roots(char *const *dirs, int ndirs);
int index_build(size_t *nfiles, size_t *nbids);
bool index_known(const char *bid);
/* The file serving bid's debuginfo/executable, or a section of it. */
int index_find(const char *bid, enum artifact art, const char *section, struct served *out);
/* The real path of path if it is a regular file under a served directory. */
char *index_resolve_under_roots(const char *path);
void index_counts(size_t *nfiles, size_t *nbids);
void index_free(void);

/* fault.c */
enum fault_kind {
	F_NONE, /* no rule of this class */
	F_LATENCY,
	F_BANDWIDTH,
	/* outcomes: at most one applies per request */
	F_OK,
	F_STATUS,
	F_HANG,
	F_RESET,
	F_TRUNCATE,
	F_STALL,
	F_WRONGFILE,
	F_REDIRECT,
	F_GZIP,
	F_ECHO,
	F_SHORT,
	F_PAD,
	F_GZIPBOMB,
	F_GZIPBOMB_NOSIZE,
	F_DEFLATEBOMB,
	F_DEFLATEBOMB_NOSIZE,
	F_BIGHEADERS,
};

struct fault {
	enum fault_kind kind;
	bool has_num;
	uint64_t num;
	char str[1024]; /* wrongfile / redirect target */
};

/* What to do to one request: the chosen rule of each class. */
struct fault_plan {
	struct fault latency, bandwidth, outcome;
	char names[128]; /* for the log: "latency=50+status=503" or "-" */
};

/* "KEY:KIND[=ARG][,times=N][,artifact=NAME]"; returns 0 or -1 with *err set. */
int fault_add_spec(const char *spec, const char **err);
int fault_add(const char *key, const char *kind, const char *arg, const char *times,
	      const char *artifact, const char **err);
void fault_reset(void);
void fault_plan(const char *bid, const char *artifact, struct fault_plan *plan);
/* One line per active rule, malloc'd. */
char *fault_list(void);
bool bid_valid(const char *s, size_t len);

/* zbody.c */
struct stat;
struct zbody;
enum zformat { ZF_GZIP, ZF_ZLIB };
/* fd's bytes [off, off + fsize) followed by zero bytes up to n bytes in
 * all, compressed in gzip or zlib format; shared and counted (release with
 * zbody_put).  NULL if it cannot be built (e.g. fsize above 256 MiB). */
struct zbody *zbody_get(int fd, const struct stat *sb, uint64_t off, uint64_t fsize, uint64_t n,
			enum zformat fmt);
void zbody_put(struct zbody *z);
uint64_t zbody_size(const struct zbody *z);
/* Copies up to max bytes of the compressed stream from pos. */
size_t zbody_read(const struct zbody *z, uint64_t pos, void *buf, size_t max);
/* Drops the cached body (it lives on while a response holds it). */
void zbody_cache_clear(void);

/* http.c */
struct MHD_Daemon;
/* Log lines end with the value of request header name ("-" when not
 * sent); before http_start(). */
void http_log_header(const char *name);
/* Starts serving on 127.0.0.1:port (0: any free port); sets *bound. */
struct MHD_Daemon *http_start(uint16_t port, int log_fd, bool verbose, uint16_t *bound);
/* Wakes every request that waits (hang, stall, latency) and stops. */
void http_stop(struct MHD_Daemon *d);

#endif
