/* SPDX-License-Identifier: MIT */
/* The perf layer's private declarations shared between its files. */
#ifndef DS_PERF_H
#define DS_PERF_H

#include "live.h"

/* ---- perf sessions (perfsession.c), for the profile */

struct ds_context *ds__perf_session_context(const struct ds_perf_session *s);
/* ds_perf_session_new() handing each sample to fn as it is replayed,
 * without keeping it (ds_perf_session_samples() then says -ENODATA).
 * The sample's DSO indexes are the session's own then: after the replay
 * rank[] turns one into its index in ds_perf_session_dsos(). */
struct ds_perf_session *ds__perf_session_stream(struct ds_context *ctx,
						const struct ds_perf_data *p,
						const struct ds_perf_session_opts *opts,
						ds_perf_sample_fn fn, void *user, char *err,
						size_t errlen);
const uint32_t *ds__perf_session_rank(const struct ds_perf_session *s);
/* The recording's host name and kernel release (NULL: not recorded). */
void ds__perf_session_host(const struct ds_perf_session *s, const char **hostname,
			   const char **osrelease);

#endif
