# SPDX-License-Identifier: MIT
# Corpus recipe (tests/corpus/README.md): bash stb.bash DIR
#
# A program of the stb headers Debian ships in libstb-dev (stb_image,
# stb_image_write, stb_truetype, stb_sprintf, each implementation in a CU
# of its own, and a main calling into them), compiled from DIR/src into
# DIR/VARIANT/prog, VARIANT one of
#
#   {gcc,clang}-O2-g{4,5}   plain, and the same with -split (-gsplit-dwarf,
#   gcc-O0-g5               the .dwo files beside the objects in
#                           DIR/VARIANT) and, for gcc-O2-g4 and clang's,
#                           -dwp (a .dwp package, DIR/VARIANT/prog.dwp,
#                           made by dwp or llvm-dwp-14 from objects
#                           compiled for it, whose .dwo files are then
#                           removed: only the package can answer);
#   gcc-O0-g4               plain only: the rest of the matrix of
#   clang-O0-g{4,5}         compiler x DWARF version x -O0/-O2
#                           (tests/cli/realcode.sh);
#   {gcc,clang}-O2-g5-lto   -flto (clang through lld: its gold plugin
#                           works too, lld is what symbolize.sh already
#                           needs), one <artificial> CU per partition;
#   gcc-O2-g4-gz            -gz=zlib: compressed debug sections in the
#   clang-O2-g5-gz          objects and in the program;
#   gcc-O2-g4-zstd          zstd-compressed by the linker: gcc 12 and
#                           clang 14 know no -gz=zstd, ld 2.40 does
#                           (--compress-debug-sections=zstd), and
#                           addr2line reads it (llvm-symbolizer 14 not).
#
# Each variant's flags are given to the link too (-flto and -gz need them).
# Every variant compiles in DIR/src (the same comp_dir and names, so the
# answers of a split build are those of its plain one, word for word).  No
# gcc DWARF 5 package: binutils 2.40's dwp crashes on gcc's DWARF 5 .dwo
# files and llvm-dwp-14 does not finish on them.  Exits 77 when a tool is
# missing.
set -euo pipefail

dir=${1:?usage: stb.bash DIR}
for tool in gcc clang ld.lld dwp llvm-dwp-14; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool is not installed" >&2
		exit 77
	fi
done
for h in stb_image stb_image_write stb_truetype stb_sprintf; do
	if [ ! -f "/usr/include/stb/$h.h" ]; then
		echo "SKIP: /usr/include/stb/$h.h is not installed (libstb-dev)" >&2
		exit 77
	fi
done
dir=$(realpath "$dir")
mkdir -p "$dir/src"
cd "$dir/src"

for lib in image image_write truetype sprintf; do
	up=$(tr a-z A-Z <<<"$lib")
	printf '#define STB_%s_IMPLEMENTATION\n#include <stb/stb_%s.h>\n' "$up" "$lib" >"$lib.c"
done
cat >main.c <<'EOF'
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#include <stb/stb_truetype.h>
#include <stb/stb_sprintf.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	unsigned char px[4 * 4 * 3] = { 0 };
	char buf[256];
	int x, y, n;

	if (argc > 1) {
		unsigned char *img = stbi_load(argv[1], &x, &y, &n, 0);
		stbtt_fontinfo font;

		stbi_image_free(img);
		if (stbi_info(argv[1], &x, &y, &n) && stbtt_InitFont(&font, px, 0)) {
			int w, h;
			float scale = stbtt_ScaleForPixelHeight(&font, 12);
			unsigned char *bm =
				stbtt_GetCodepointBitmap(&font, 0, scale, 'a', &w, &h, 0, 0);

			stbtt_FreeBitmap(bm, 0);
		}
	}
	stbi_write_png("out.png", 4, 4, 3, px, 12);
	stbi_write_bmp("out.bmp", 4, 4, 3, px);
	stbi_write_jpg("out.jpg", 4, 4, 3, px, 90);
	stbsp_snprintf(buf, sizeof(buf), "%d %s %f", argc, argv[0], 1.5);
	puts(buf);
	return 0;
}
EOF
srcs="image image_write truetype sprintf main"

# VARIANT CC FLAGS...: one line per variant.
variants=(
	"gcc-O2-g4 gcc -O2 -gdwarf-4"
	"gcc-O2-g5 gcc -O2 -gdwarf-5"
	"gcc-O0-g5 gcc -O0 -gdwarf-5"
	"clang-O2-g4 clang -O2 -gdwarf-4"
	"clang-O2-g5 clang -O2 -gdwarf-5"
	"gcc-O0-g4 gcc -O0 -gdwarf-4"
	"clang-O0-g4 clang -O0 -gdwarf-4"
	"clang-O0-g5 clang -O0 -gdwarf-5"
	"gcc-O2-g5-lto gcc -O2 -gdwarf-5 -flto=1"
	"clang-O2-g5-lto clang -O2 -gdwarf-5 -flto -fuse-ld=lld"
	"gcc-O2-g4-gz gcc -O2 -gdwarf-4 -gz=zlib"
	"clang-O2-g5-gz clang -O2 -gdwarf-5 -gz=zlib"
	"gcc-O2-g4-zstd gcc -O2 -gdwarf-4 -Wl,--compress-debug-sections=zstd"
)
split="gcc-O2-g4 gcc-O2-g5 gcc-O0-g5 clang-O2-g4 clang-O2-g5"
packaged="gcc-O2-g4 clang-O2-g4 clang-O2-g5"

# Every object of every build, two compilers at a time.
jobs=()
for v in "${variants[@]}"; do
	read -r name cc flags <<<"$v"
	builds=$name
	case " $split " in *" $name "*) builds="$builds $name-split" ;; esac
	case " $packaged " in *" $name "*) builds="$builds $name-dwp" ;; esac
	for b in $builds; do
		out=../$b
		extra=
		case $b in
		*-split) extra=-gsplit-dwarf ;;
		*-dwp) extra=-gsplit-dwarf out=../$b/obj ;;
		esac
		mkdir -p "$out"
		for s in $srcs; do
			jobs+=("$cc $flags $extra -c $s.c -o $out/$s.o")
		done
	done
done
printf '%s\n' "${jobs[@]}" | xargs -P 2 -I{} sh -c '{}'

for v in "${variants[@]}"; do
	read -r name cc flags <<<"$v"
	for b in "$name" "$name-split" "$name-dwp"; do
		[ -d "../$b" ] || continue
		objs=../$b
		[ "${b%-dwp}" = "$b" ] || objs=../$b/obj
		$cc $flags -o "../$b/prog" $(for s in $srcs; do echo "$objs/$s.o"; done) -lm
	done
	if [ -d "../$name-dwp" ]; then
		case $cc in
		gcc) dwp -o "../$name-dwp/prog.dwp" ../"$name"-dwp/obj/*.dwo ;;
		*) llvm-dwp-14 -o "../$name-dwp/prog.dwp" ../"$name"-dwp/obj/*.dwo ;;
		esac
		rm -rf "../$name-dwp/obj"
	fi
done
rm -f ../*/*.o
ls -l "$dir"/*/prog "$dir"/*/prog.dwp
