# Fuzz harnesses (see fuzz/README.md).  Each one is also a regression test:
# fuzz/replay.c runs its generated corpus, plus deterministic ELF-aware
# mutations of every seed, with no fuzzing engine (zstd's approach).  The
# corpus is generated at test time because no ELF file may be committed.
add_executable(ds_mkelf ${CMAKE_SOURCE_DIR}/fuzz/mkelf.c)

add_executable(fuzz_buildid_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_buildid.c)
target_link_libraries(fuzz_buildid_replay PRIVATE dsostore_static)

set(DS_FUZZ_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/buildid)
add_test(NAME fuzz_buildid_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_corpus.sh ${DS_FUZZ_CORPUS} $<TARGET_FILE:ds_mkelf>)
set_tests_properties(fuzz_buildid_corpus PROPERTIES
  FIXTURES_SETUP fuzz_buildid_corpus TIMEOUT 120)
# ~50 seeds x 60 mutations: a few thousand inputs, seconds even under ASan.
add_test(NAME fuzz_buildid_replay
  COMMAND fuzz_buildid_replay -n 60 -s 1 ${DS_FUZZ_CORPUS})
set_tests_properties(fuzz_buildid_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_buildid_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")

# The symbolize request-line parser: a committed text corpus (no ELF in it),
# cheap inputs, many mutations.
add_executable(fuzz_symline_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_symline.c)
target_link_libraries(fuzz_symline_replay PRIVATE dsostore_static)
add_test(NAME fuzz_symline_replay
  COMMAND fuzz_symline_replay -n 2000 -s 1 ${CMAKE_SOURCE_DIR}/fuzz/corpus/symline)
set_tests_properties(fuzz_symline_replay PROPERTIES
  TIMEOUT 120 ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")

# The whole symbolize path on arbitrary bytes as an ELF file.  Each input
# is a full ELF + DWARF parse and index build, so few mutations per seed
# (~20 seeds x 120: about 5 s with ASan).
add_executable(fuzz_symelf_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_symelf.c)
target_link_libraries(fuzz_symelf_replay PRIVATE dsostore_static)
set(DS_SYMELF_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/symelf)
add_test(NAME fuzz_symelf_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_symelf_corpus.sh ${DS_SYMELF_CORPUS})
set_tests_properties(fuzz_symelf_corpus PROPERTIES
  FIXTURES_SETUP fuzz_symelf_corpus TIMEOUT 120)
add_test(NAME fuzz_symelf_replay
  COMMAND fuzz_symelf_replay -n 120 -s 1 ${DS_SYMELF_CORPUS})
set_tests_properties(fuzz_symelf_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_symelf_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR};DEBUGINFOD_URLS=")

# libFuzzer builds (scripts/fuzz configures a clang build with -DDS_FUZZ=ON
# and the library instrumented with -fsanitize=fuzzer-no-link).
option(DS_FUZZ "Build the libFuzzer harnesses (clang only)" OFF)
if(DS_FUZZ)
  add_executable(fuzz_buildid ${CMAKE_SOURCE_DIR}/fuzz/fuzz_buildid.c)
  target_compile_options(fuzz_buildid PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_buildid PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_buildid PRIVATE dsostore_static)
  foreach(t fuzz_symline fuzz_symelf)
    add_executable(${t} ${CMAKE_SOURCE_DIR}/fuzz/${t}.c)
    target_compile_options(${t} PRIVATE -fsanitize=fuzzer)
    target_link_options(${t} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${t} PRIVATE dsostore_static)
  endforeach()
endif()

# The perf.data reader.  Seeds are generated (a recording holds this
# machine's paths): a perf record of `true` when perf works here, hand-built
# files, both byte orders, cut and corrupted copies: ~175 seeds x 400
# mutations, about 70,000 inputs in 2 s with ASan.
add_executable(fuzz_perfdata_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_perfdata.c)
target_link_libraries(fuzz_perfdata_replay PRIVATE dsostore_static)
set(DS_PERFDATA_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/perfdata)
add_test(NAME fuzz_perfdata_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_perfdata_corpus.sh ${DS_PERFDATA_CORPUS})
set_tests_properties(fuzz_perfdata_corpus PROPERTIES
  FIXTURES_SETUP fuzz_perfdata_corpus TIMEOUT 120)
add_test(NAME fuzz_perfdata_replay
  COMMAND fuzz_perfdata_replay -n 400 -s 1 ${DS_PERFDATA_CORPUS})
set_tests_properties(fuzz_perfdata_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_perfdata_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
# The same corpus through the whole CLI (buildid-list, report --no-fetch,
# prefetch with no servers): what the tool does with what the reader
# accepts, under the sanitizers too.  ~1,000 processes: some 20 s, 50 s
# with ASan.
add_test(NAME fuzz_perfdata_cli
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/replay_cli.sh ${DS_PERFDATA_CORPUS})
set_tests_properties(fuzz_perfdata_cli PROPERTIES
  FIXTURES_REQUIRED fuzz_perfdata_corpus TIMEOUT 600 SKIP_RETURN_CODE 77
  ENVIRONMENT "${DS_TEST_ENV}")
if(DS_FUZZ)
  add_executable(fuzz_perfdata ${CMAKE_SOURCE_DIR}/fuzz/fuzz_perfdata.c)
  target_compile_options(fuzz_perfdata PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_perfdata PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_perfdata PRIVATE dsostore_static)
endif()

# The saved symbol index (lib/symfile.c, and symindex.c on what it
# accepts).  Seeds: containers written from the format's description by
# gen_symfile_corpus.sh (Python), and real indexes of small programs saved
# by `dsostore index` when the compilers are here.
add_executable(fuzz_symfile_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_symfile.c)
target_include_directories(fuzz_symfile_replay PRIVATE ${CMAKE_SOURCE_DIR}/lib)
target_link_libraries(fuzz_symfile_replay PRIVATE dsostore_static)
set(DS_SYMFILE_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/symfile)
add_test(NAME fuzz_symfile_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_symfile_corpus.sh ${DS_SYMFILE_CORPUS}
    $<TARGET_FILE:fuzz_symfile_replay>)
set_tests_properties(fuzz_symfile_corpus PROPERTIES
  FIXTURES_SETUP fuzz_symfile_corpus TIMEOUT 120 ENVIRONMENT "${DS_TEST_ENV}")
add_test(NAME fuzz_symfile_replay
  COMMAND fuzz_symfile_replay -n 300 -s 1 ${DS_SYMFILE_CORPUS})
set_tests_properties(fuzz_symfile_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_symfile_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_symfile ${CMAKE_SOURCE_DIR}/fuzz/fuzz_symfile.c)
  target_include_directories(fuzz_symfile PRIVATE ${CMAKE_SOURCE_DIR}/lib)
  target_compile_options(fuzz_symfile PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_symfile PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_symfile PRIVATE dsostore_static)
endif()

# Go's .gopclntab reader (lib/gopclntab.c).  Seeds: the hand-built tables
# of mkgotab.h (every layout, both byte orders, 32 and 64 bit) and, when go
# is installed, the tables of a small program built for amd64 and 386.
add_executable(ds_mkgotab ${CMAKE_SOURCE_DIR}/fuzz/mkgotab.c)
add_executable(fuzz_gopclntab_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_gopclntab.c)
target_include_directories(fuzz_gopclntab_replay PRIVATE ${CMAKE_SOURCE_DIR}/lib)
target_link_libraries(fuzz_gopclntab_replay PRIVATE dsostore_static)
set(DS_GOPCLNTAB_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/gopclntab)
add_test(NAME fuzz_gopclntab_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_gopclntab_corpus.sh ${DS_GOPCLNTAB_CORPUS}
    $<TARGET_FILE:ds_mkgotab>)
set_tests_properties(fuzz_gopclntab_corpus PROPERTIES
  FIXTURES_SETUP fuzz_gopclntab_corpus TIMEOUT 120)
add_test(NAME fuzz_gopclntab_replay
  COMMAND fuzz_gopclntab_replay -n 300 -s 1 ${DS_GOPCLNTAB_CORPUS})
set_tests_properties(fuzz_gopclntab_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_gopclntab_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_gopclntab ${CMAKE_SOURCE_DIR}/fuzz/fuzz_gopclntab.c)
  target_include_directories(fuzz_gopclntab PRIVATE ${CMAKE_SOURCE_DIR}/lib)
  target_compile_options(fuzz_gopclntab PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_gopclntab PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_gopclntab PRIVATE dsostore_static)
endif()

# The .dwp unit index (lib/dwarf_split.c): the indexes of real packages
# made by dwp and llvm-dwp-14 (when here) and hand-made ones, ~60 seeds x
# 2000 mutations, a second or two.
add_executable(fuzz_dwp_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_dwp.c)
target_include_directories(fuzz_dwp_replay PRIVATE ${CMAKE_SOURCE_DIR}/lib)
target_link_libraries(fuzz_dwp_replay PRIVATE dsostore_static)
set(DS_DWP_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/dwp)
add_test(NAME fuzz_dwp_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_dwp_corpus.sh ${DS_DWP_CORPUS})
set_tests_properties(fuzz_dwp_corpus PROPERTIES
  FIXTURES_SETUP fuzz_dwp_corpus TIMEOUT 120)
add_test(NAME fuzz_dwp_replay
  COMMAND fuzz_dwp_replay -n 2000 -s 1 ${DS_DWP_CORPUS})
set_tests_properties(fuzz_dwp_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_dwp_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_dwp ${CMAKE_SOURCE_DIR}/fuzz/fuzz_dwp.c)
  target_include_directories(fuzz_dwp PRIVATE ${CMAKE_SOURCE_DIR}/lib)
  target_compile_options(fuzz_dwp PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_dwp PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_dwp PRIVATE dsostore_static)
endif()

# The kernel room's readers: /proc/kallsyms text and the kallsyms cache file
# (lib/kernel.c).  A committed text corpus (no ELF in it), cheap inputs.
add_executable(fuzz_kallsyms_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_kallsyms.c)
target_include_directories(fuzz_kallsyms_replay PRIVATE ${CMAKE_SOURCE_DIR}/lib)
target_link_libraries(fuzz_kallsyms_replay PRIVATE dsostore_static)
add_test(NAME fuzz_kallsyms_replay
  COMMAND fuzz_kallsyms_replay -n 3000 -s 1 ${CMAKE_SOURCE_DIR}/fuzz/corpus/kallsyms)
set_tests_properties(fuzz_kallsyms_replay PROPERTIES
  TIMEOUT 120 ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_kallsyms ${CMAKE_SOURCE_DIR}/fuzz/fuzz_kallsyms.c)
  target_include_directories(fuzz_kallsyms PRIVATE ${CMAKE_SOURCE_DIR}/lib)
  target_compile_options(fuzz_kallsyms PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_kallsyms PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_kallsyms PRIVATE dsostore_static)
endif()

# The normalize room's text readers (lib/normalize.c): /proc/PID/maps and
# JIT perf maps.  A committed text corpus, cheap inputs, many mutations.
add_executable(fuzz_procmaps_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_procmaps.c)
target_include_directories(fuzz_procmaps_replay PRIVATE ${CMAKE_SOURCE_DIR}/lib)
target_link_libraries(fuzz_procmaps_replay PRIVATE dsostore_static)
add_test(NAME fuzz_procmaps_replay
  COMMAND fuzz_procmaps_replay -n 3000 -s 1 ${CMAKE_SOURCE_DIR}/fuzz/corpus/procmaps)
set_tests_properties(fuzz_procmaps_replay PROPERTIES
  TIMEOUT 120 ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_procmaps ${CMAKE_SOURCE_DIR}/fuzz/fuzz_procmaps.c)
  target_include_directories(fuzz_procmaps PRIVATE ${CMAKE_SOURCE_DIR}/lib)
  target_compile_options(fuzz_procmaps PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_procmaps PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_procmaps PRIVATE dsostore_static)
endif()

# perf's config syntax, raw ELF notes and /proc/modules lines
# (lib/perfconfig.c, lib/kernel.c, lib/ksym.c): a committed corpus.
add_executable(fuzz_kconf_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_kconf.c)
target_include_directories(fuzz_kconf_replay PRIVATE ${CMAKE_SOURCE_DIR}/lib)
target_link_libraries(fuzz_kconf_replay PRIVATE dsostore_static)
add_test(NAME fuzz_kconf_replay
  COMMAND fuzz_kconf_replay -n 3000 -s 1 ${CMAKE_SOURCE_DIR}/fuzz/corpus/kconf)
set_tests_properties(fuzz_kconf_replay PROPERTIES
  TIMEOUT 120 ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_kconf ${CMAKE_SOURCE_DIR}/fuzz/fuzz_kconf.c)
  target_include_directories(fuzz_kconf PRIVATE ${CMAKE_SOURCE_DIR}/lib)
  target_compile_options(fuzz_kconf PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_kconf PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_kconf PRIVATE dsostore_static)
endif()

# The .ko relocation of symbolize --kernel (lib/ksym.c): seeds compiled
# at test time (no ELF committed), a few hundred mutations each.
add_executable(fuzz_ko_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_ko.c)
target_include_directories(fuzz_ko_replay PRIVATE ${CMAKE_SOURCE_DIR}/lib)
target_link_libraries(fuzz_ko_replay PRIVATE dsostore_static)
set(DS_KO_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/ko)
add_test(NAME fuzz_ko_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_ko_corpus.sh ${DS_KO_CORPUS})
set_tests_properties(fuzz_ko_corpus PROPERTIES FIXTURES_SETUP fuzz_ko_corpus TIMEOUT 120)
add_test(NAME fuzz_ko_replay
  COMMAND fuzz_ko_replay -n 400 -s 1 ${DS_KO_CORPUS})
set_tests_properties(fuzz_ko_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_ko_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_ko ${CMAKE_SOURCE_DIR}/fuzz/fuzz_ko.c)
  target_include_directories(fuzz_ko PRIVATE ${CMAKE_SOURCE_DIR}/lib)
  target_compile_options(fuzz_ko PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_ko PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_ko PRIVATE dsostore_static)
endif()

# The folded-stack reader of dsostore flamegraph (tools/folded.c): a
# committed text corpus, many mutations, a second or two.  The harness
# carries tools/folded.c itself (the CLI's code, not the library's).
add_executable(fuzz_folded_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_folded.c
  ${CMAKE_SOURCE_DIR}/tools/folded.c)
target_include_directories(fuzz_folded_replay PRIVATE ${CMAKE_SOURCE_DIR}/tools)
target_link_libraries(fuzz_folded_replay PRIVATE dsostore_static)
add_test(NAME fuzz_folded_replay
  COMMAND fuzz_folded_replay -n 3000 -s 1 ${CMAKE_SOURCE_DIR}/fuzz/corpus/folded)
set_tests_properties(fuzz_folded_replay PROPERTIES
  TIMEOUT 120 ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_folded ${CMAKE_SOURCE_DIR}/fuzz/fuzz_folded.c
    ${CMAKE_SOURCE_DIR}/tools/folded.c)
  target_include_directories(fuzz_folded PRIVATE ${CMAKE_SOURCE_DIR}/tools)
  target_compile_options(fuzz_folded PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_folded PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_folded PRIVATE dsostore_static)
endif()

# annotate's source text (tools/srctext.c: what a debuginfod server sends,
# split into lines and written to a terminal and into JSON).  A committed
# text corpus, cheap inputs, many mutations.
add_executable(fuzz_srctext_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_srctext.c
  ${CMAKE_SOURCE_DIR}/tools/srctext.c)
target_include_directories(fuzz_srctext_replay PRIVATE ${CMAKE_SOURCE_DIR}/tools)
add_test(NAME fuzz_srctext_replay
  COMMAND fuzz_srctext_replay -n 3000 -s 1 ${CMAKE_SOURCE_DIR}/fuzz/corpus/srctext)
set_tests_properties(fuzz_srctext_replay PROPERTIES
  TIMEOUT 120 ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_srctext ${CMAKE_SOURCE_DIR}/fuzz/fuzz_srctext.c
    ${CMAKE_SOURCE_DIR}/tools/srctext.c)
  target_include_directories(fuzz_srctext PRIVATE ${CMAKE_SOURCE_DIR}/tools)
  target_compile_options(fuzz_srctext PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_srctext PRIVATE -fsanitize=fuzzer)
endif()

# The core-file reader (lib/core.c): hand-built cores of both classes and
# byte orders, and a real core cut to its headers, notes and first pages
# when this machine writes one; ~20 seeds x 400 mutations.
add_executable(fuzz_core_replay
  ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${CMAKE_SOURCE_DIR}/fuzz/fuzz_core.c)
target_link_libraries(fuzz_core_replay PRIVATE dsostore_static)
set(DS_CORE_CORPUS ${CMAKE_BINARY_DIR}/fuzz-corpus/core)
add_test(NAME fuzz_core_corpus
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/gen_core_corpus.sh ${DS_CORE_CORPUS})
set_tests_properties(fuzz_core_corpus PROPERTIES
  FIXTURES_SETUP fuzz_core_corpus TIMEOUT 120)
add_test(NAME fuzz_core_replay
  COMMAND fuzz_core_replay -n 400 -s 1 ${DS_CORE_CORPUS})
set_tests_properties(fuzz_core_replay PROPERTIES
  FIXTURES_REQUIRED fuzz_core_corpus TIMEOUT 120
  ENVIRONMENT "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}")
if(DS_FUZZ)
  add_executable(fuzz_core ${CMAKE_SOURCE_DIR}/fuzz/fuzz_core.c)
  target_compile_options(fuzz_core PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_core PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_core PRIVATE dsostore_static)
endif()
