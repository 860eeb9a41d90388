/* libmicrohttpd, dlopen()ed when `dsostore serve` starts (as the library
 * does libcurl): every other command of the CLI starts without loading
 * it and the TLS libraries it links (gnutls and six more), which would
 * cost each of them more than answering one address from a saved index.
 * tools/serve.h maps the MHD_ names used to this table. */
#define SERVE_MHD_TABLE
#include "serve.h"

#include <dlfcn.h>
#include <stdio.h>

struct serve_mhd serve_mhd;

/* In struct serve_mhd's order. */
static const char *const names[] = {
	"MHD_start_daemon",
	"MHD_stop_daemon",
	"MHD_quiesce_daemon",
	"MHD_get_daemon_info",
	"MHD_get_connection_info",
	"MHD_lookup_connection_value",
	"MHD_queue_response",
	"MHD_create_response_from_buffer",
	"MHD_create_response_from_fd_at_offset64",
	"MHD_create_response_from_callback",
	"MHD_add_response_header",
	"MHD_destroy_response",
	"MHD_suspend_connection",
	"MHD_resume_connection",
};

int serve_mhd_load(char *err, size_t len)
{
	void *h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
	void **fn = (void **)&serve_mhd;

	_Static_assert(sizeof(serve_mhd) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
		       "one name per libmicrohttpd pointer");
	if (!h) {
		snprintf(err, len, "cannot load libmicrohttpd (Debian: libmicrohttpd12): %s",
			 dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		/* POSIX: a function pointer and void * convert through dlsym. */
		fn[i] = dlsym(h, names[i]);
		if (!fn[i]) {
			snprintf(err, len, "libmicrohttpd has no %s: too old (0.9.71 or later needed)",
				 names[i]);
			return -1;
		}
	}
	return 0;
}
