/* DWARF's LEB128 readers (lib/symbolize/dwarf_int.h) at the edges of
 * 64 bits, the values worked out by hand from the encoding (DWARF 5,
 * 7.6: seven bits a byte, low first, the top bit says more follows; a
 * signed value's sign is bit 6 of its last byte).  Under UBSan a shift
 * into the sign bit fails the test. */
#include "testutil.h"

#include <inttypes.h>

#include "symbolize/dwarf_int.h"

static void check_s(const char *what, const unsigned char *b, size_t n, int64_t want)
{
	struct cursor c = { .p = b, .end = b + n };
	int64_t got = sleb(&c);

	if (c.bad || c.p != b + n || got != want) {
		fprintf(stderr, "FAIL sleb %s: %" PRId64 " (bad %d, %td of %zu bytes), want %" PRId64
				"\n",
			what, got, c.bad, c.p - b, n, want);
		t_failures++;
	}
}

static void check_u(const char *what, const unsigned char *b, size_t n, uint64_t want)
{
	struct cursor c = { .p = b, .end = b + n };
	uint64_t got = uleb(&c);

	if (c.bad || c.p != b + n || got != want) {
		fprintf(stderr, "FAIL uleb %s: %" PRIu64 ", want %" PRIu64 "\n", what, got, want);
		t_failures++;
	}
}

int main(void)
{
	static const unsigned char m1[] = { 0x7f };
	static const unsigned char m64[] = { 0x40 };
	static const unsigned char m65[] = { 0xbf, 0x7f };
	static const unsigned char p63[] = { 0x3f };
	static const unsigned char p64[] = { 0xc0, 0x00 };
	/* INT64_MIN: 63 zero bits in nine bytes, then bit 63 (the sign) as
	 * bit 0 of a tenth byte whose bit 6 is set too: 0x7f. */
	static const unsigned char min[] = { 0x80, 0x80, 0x80, 0x80, 0x80,
					     0x80, 0x80, 0x80, 0x80, 0x7f };
	/* INT64_MAX: 63 one bits, the tenth byte 0. */
	static const unsigned char max[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					     0xff, 0xff, 0xff, 0xff, 0x00 };
	/* -2^62: bit 62 set and sign-extended: nine bytes reach bit 62,
	 * whose byte (bits 56..62) is 0x40 | more. */
	static const unsigned char m2p62[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40 };
	static const unsigned char umax[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					      0xff, 0xff, 0xff, 0xff, 0x01 };

	check_s("-1", m1, sizeof(m1), -1);
	check_s("-64", m64, sizeof(m64), -64);
	check_s("-65", m65, sizeof(m65), -65);
	check_s("63", p63, sizeof(p63), 63);
	check_s("64", p64, sizeof(p64), 64);
	check_s("INT64_MIN", min, sizeof(min), INT64_MIN);
	check_s("INT64_MAX", max, sizeof(max), INT64_MAX);
	check_s("-2^62", m2p62, sizeof(m2p62), -((int64_t)1 << 62));
	check_u("UINT64_MAX", umax, sizeof(umax), UINT64_MAX);
	check_u("63", p63, sizeof(p63), 63);
	return t_done("test_leb");
}
