/* symbolize's "pid:PID ADDR" lines and --pid: a live process's absolute
 * addresses, normalized (cli.h's cli_pid_address()). */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One normalizer per process named in the stream, kept to the end. */
#define PID_NORMALIZERS 64

static struct {
	int pid;
	struct ds_normalizer *n;
	int err;
} pids[PID_NORMALIZERS];
static size_t npids;

static struct ds_normalizer *normalizer_of(struct ds_store *store, int pid, int *err)
{
	for (size_t i = 0; i < npids; i++) {
		if (pids[i].pid == pid) {
			*err = pids[i].err;
			return pids[i].n;
		}
	}
	if (npids == PID_NORMALIZERS) { /* the oldest goes */
		ds_normalizer_free(pids[0].n);
		memmove(pids, pids + 1, (PID_NORMALIZERS - 1) * sizeof(pids[0]));
		npids--;
	}
	pids[npids].pid = pid;
	pids[npids].n = ds_normalizer_new(store, pid, NULL);
	pids[npids].err = pids[npids].n ? 0 : -errno;
	*err = pids[npids].err;
	return pids[npids++].n;
}

int cli_pid_address(struct ds_store *store, const char *key, int pid, uint64_t addr,
		    bool file_offset, struct cli_pid_answer *a)
{
	struct ds_normalizer *n;
	struct ds_norm_addr o;
	int err;

	memset(a, 0, sizeof(*a));
	if (key && (strncmp(key, "pid:", 4) || !cli_parse_pid(key + 4, &pid))) {
		snprintf(a->error, sizeof(a->error), "%s: not pid:PID", key);
		return -EINVAL;
	}
	snprintf(a->module, sizeof(a->module), "pid:%d", pid);
	n = normalizer_of(store, pid, &err);
	if (!n) {
		snprintf(a->error, sizeof(a->error), "process %d: %s", pid, ds_strerror(err));
		return err;
	}
	err = ds_normalize(n, &addr, 1, &o);
	if (err < 0 && o.reason != DS_NORM_ERROR) {
		o.reason = DS_NORM_ERROR;
		o.error = err;
	}
	if (o.path)
		snprintf(a->module, sizeof(a->module), "%s", o.path);
	switch (o.reason) {
	case DS_NORM_OK:
	case DS_NORM_NO_BUILD_ID:
		if (o.dso && (file_offset || o.vaddr_known)) {
			a->dso = o.dso; /* the reference goes to the caller */
			a->addr = file_offset ? o.file_offset : o.vaddr;
			return 0;
		}
		snprintf(a->error, sizeof(a->error), "0x%" PRIx64 ": %s", addr,
			 o.dso ? "no program headers to place it" : "no build ID, no file");
		break;
	case DS_NORM_JIT:
		snprintf(a->jit, sizeof(a->jit), "%s", o.jit_name);
		a->addr = addr;
		a->is_jit = true;
		ds_norm_release(&o, 1);
		return 0;
	case DS_NORM_ERROR:
		snprintf(a->error, sizeof(a->error), "0x%" PRIx64 ": %s", addr,
			 ds_strerror(o.error));
		break;
	default:
		snprintf(a->error, sizeof(a->error), "0x%" PRIx64 ": %s", addr,
			 ds_norm_reason_name(o.reason));
		break;
	}
	ds_norm_release(&o, 1);
	return -ENOENT;
}

void cli_pid_done(void)
{
	for (size_t i = 0; i < npids; i++)
		ds_normalizer_free(pids[i].n);
	npids = 0;
}
