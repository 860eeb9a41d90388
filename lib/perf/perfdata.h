/* SPDX-License-Identifier: MIT */
/* Between the perf.data reader (lib/perf/perfdata.c) and the session that
 * replays it (lib/perf/perfsession.c).  Not exported. */
#ifndef DS_PERFDATA_H
#define DS_PERFDATA_H

#include "dsostore.h"

/* Kernel record types (perf_event.h). */
enum {
	DS__PERF_REC_MMAP = 1,
	DS__PERF_REC_COMM = 3,
	DS__PERF_REC_EXIT = 4,
	DS__PERF_REC_FORK = 7,
	DS__PERF_REC_SAMPLE = 9,
	DS__PERF_REC_MMAP2 = 10,
};

/* perf_event_attr.sample_type bits, in the order a sample lays them out. */
#define DS__PERF_SAMPLE_IP (1ULL << 0)
#define DS__PERF_SAMPLE_TID (1ULL << 1)
#define DS__PERF_SAMPLE_TIME (1ULL << 2)
#define DS__PERF_SAMPLE_ADDR (1ULL << 3)
#define DS__PERF_SAMPLE_READ (1ULL << 4)
#define DS__PERF_SAMPLE_CALLCHAIN (1ULL << 5)
#define DS__PERF_SAMPLE_ID (1ULL << 6)
#define DS__PERF_SAMPLE_CPU (1ULL << 7)
#define DS__PERF_SAMPLE_PERIOD (1ULL << 8)
#define DS__PERF_SAMPLE_STREAM_ID (1ULL << 9)
#define DS__PERF_SAMPLE_RAW (1ULL << 10)
#define DS__PERF_SAMPLE_BRANCH_STACK (1ULL << 11)
#define DS__PERF_SAMPLE_REGS_USER (1ULL << 12)
#define DS__PERF_SAMPLE_STACK_USER (1ULL << 13)
#define DS__PERF_SAMPLE_IDENTIFIER (1ULL << 16)

/* branch_sample_type: the branch stack starts with a u64 hw_idx. */
#define DS__PERF_SAMPLE_BRANCH_HW_INDEX (1ULL << 17)

/* read_format bits. */
#define DS__PERF_FORMAT_TOTAL_TIME_ENABLED (1ULL << 0)
#define DS__PERF_FORMAT_TOTAL_TIME_RUNNING (1ULL << 1)
#define DS__PERF_FORMAT_ID (1ULL << 2)
#define DS__PERF_FORMAT_GROUP (1ULL << 3)
#define DS__PERF_FORMAT_LOST (1ULL << 4)

/* perf_event_attr flag bits (the bitfield word at offset 40). */
#define DS__PERF_ATTR_SAMPLE_ID_ALL (1ULL << 18)

/* misc bits. */
#define DS__PERF_MISC_CPUMODE_MASK 7u
#define DS__PERF_MISC_MMAP_DATA (1u << 13) /* a non-executable mapping */
#define DS__PERF_MISC_MMAP_BUILD_ID (1u << 14)
#define DS__PERF_MISC_COMM_EXEC (1u << 13)

struct ds__perf_attr {
	uint32_t type;
	uint64_t config, sample_type, read_format, flags;
	/* 0 when the attr is too old to have them */
	uint64_t branch_sample_type, regs_user;
};

/* A record of the data section, decompressed ones included. */
struct ds__perf_rec {
	const unsigned char *p; /* the record, header first; the file's byte order */
	uint64_t loc; /* private to the reader */
	uint64_t file_off; /* where it is (a compressed one: its compressed record) */
	uint64_t time; /* its timestamp, else the one of the record before it */
	uint64_t seq; /* position in the file */
	uint32_t type;
	uint16_t size;
	bool has_time;
	unsigned int attr; /* index of its attr (by sample id) */
};

uint64_t ds__perf_rd64(const struct ds_perf_data *p, const void *q);
uint32_t ds__perf_rd32(const struct ds_perf_data *p, const void *q);
uint16_t ds__perf_rd16(const struct ds_perf_data *p, const void *q);
unsigned int ds__perf_attr_of(const struct ds_perf_data *p, const unsigned char *rec,
			      uint16_t size, bool sample);
const struct ds__perf_attr *ds__perf_attrs(const struct ds_perf_data *p, unsigned int *n);
/* The list of records, in time order, as the reader keeps it: 32 bytes a
 * record (a -g recording of a busy machine has millions); the whole
 * struct ds__perf_rec by ds__perf_record(). */
struct ds__perf_ent {
	uint64_t loc, time;
	uint32_t seq, attr, type;
	uint16_t size;
	uint8_t has_time, pad;
};
const struct ds__perf_ent *ds__perf_records(const struct ds_perf_data *p, size_t *n);
void ds__perf_record(const struct ds_perf_data *p, const struct ds__perf_ent *e,
		     struct ds__perf_rec *out);
/* The records before the i-th (of ds__perf_records()) have been read:
 * the pages of a mapped file that no later record is in may go from
 * memory (read again from the file if touched).  *done: the caller's,
 * 0 at first: how far that went. */
void ds__perf_records_done(const struct ds_perf_data *p, size_t i, uint64_t *done);

#endif
