# Fuzz harnesses (see fuzz/README.md).  Each one is also a regression test:
# fuzz/replay.c runs its corpus, plus deterministic ELF-aware mutations of
# every seed, with no fuzzing engine (zstd's approach).  Corpora with ELF
# in them are generated at test time because no ELF file may be committed.
add_executable(ds_mkelf ${CMAKE_SOURCE_DIR}/fuzz/mkelf.c)
add_executable(ds_mkgotab ${CMAKE_SOURCE_DIR}/fuzz/mkgotab.c)

# libFuzzer builds (scripts/fuzz configures a clang build with -DDS_FUZZ=ON
# and the library instrumented with -fsanitize=fuzzer-no-link).
option(DS_FUZZ "Build the libFuzzer harnesses (clang only)" OFF)

# ds_fuzz(NAME MUTATIONS N [SOURCES file...] [INCLUDE dir...] [NO_LIBRARY]
#         [GEN script [GEN_ARGS arg...] [GEN_ENV var=value...]]
#         [ENV var=value...])
# fuzz/fuzz_NAME.c as fuzz_NAME_replay (with fuzz/replay.c) and, with
# DS_FUZZ, as the libFuzzer target fuzz_NAME; SOURCES are compiled into
# both, INCLUDE added to their include path, the static library linked
# unless NO_LIBRARY.  The test fuzz_NAME_replay runs N mutations of each
# seed of fuzz/corpus/NAME, or, with GEN, of the corpus that the test
# fuzz_NAME_corpus writes into the build's fuzz-corpus/NAME (bash
# fuzz/SCRIPT DIR GEN_ARGS...; that directory is DS_FUZZ_CORPUS_NAME in
# the caller's scope).
function(ds_fuzz name)
  cmake_parse_arguments(F "NO_LIBRARY" "MUTATIONS;GEN" "SOURCES;INCLUDE;GEN_ARGS;GEN_ENV;ENV"
    ${ARGN})
  set(src ${CMAKE_SOURCE_DIR}/fuzz/fuzz_${name}.c ${F_SOURCES})
  add_executable(fuzz_${name}_replay ${CMAKE_SOURCE_DIR}/fuzz/replay.c ${src})
  set(targets fuzz_${name}_replay)
  if(DS_FUZZ)
    add_executable(fuzz_${name} ${src})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    list(APPEND targets fuzz_${name})
  endif()
  foreach(t ${targets})
    if(F_INCLUDE)
      target_include_directories(${t} PRIVATE ${F_INCLUDE})
    endif()
    if(NOT F_NO_LIBRARY)
      target_link_libraries(${t} PRIVATE dsostore_static)
    endif()
  endforeach()
  if(F_GEN)
    set(corpus ${CMAKE_BINARY_DIR}/fuzz-corpus/${name})
    add_test(NAME fuzz_${name}_corpus
      COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/${F_GEN} ${corpus} ${F_GEN_ARGS})
    set_tests_properties(fuzz_${name}_corpus PROPERTIES
      FIXTURES_SETUP fuzz_${name}_corpus TIMEOUT 120)
    if(F_GEN_ENV)
      set_tests_properties(fuzz_${name}_corpus PROPERTIES ENVIRONMENT "${F_GEN_ENV}")
    endif()
    set(DS_FUZZ_CORPUS_${name} ${corpus} PARENT_SCOPE)
  else()
    set(corpus ${CMAKE_SOURCE_DIR}/fuzz/corpus/${name})
  endif()
  set(env "FUZZ_CRASH_DIR=${CMAKE_BINARY_DIR}" ${F_ENV})
  add_test(NAME fuzz_${name}_replay
    COMMAND fuzz_${name}_replay -n ${F_MUTATIONS} -s 1 ${corpus})
  # TSan runs a replay some 20 times slower than a plain build (gopclntab:
  # 4 s plain, 18 s ASan, 86 s TSan on an idle 2-core machine), ASan some
  # 5 times (perfdata timed out at 120 s with two sanitizer suites on the
  # machine at once): room for a loaded one.
  set(timeout 120)
  if(SANITIZE MATCHES "thread")
    set(timeout 600)
  elseif(SANITIZE)
    set(timeout 400)
  endif()
  set_tests_properties(fuzz_${name}_replay PROPERTIES TIMEOUT ${timeout} ENVIRONMENT "${env}")
  if(F_GEN)
    set_tests_properties(fuzz_${name}_replay PROPERTIES FIXTURES_REQUIRED fuzz_${name}_corpus)
  endif()
endfunction()

# The build-ID reader, and a download's check of the same bytes from
# memory and from a file: ~50 generated ELF seeds x 60 mutations, a few
# thousand inputs, seconds even under ASan.
ds_fuzz(buildid MUTATIONS 60 INCLUDE ${DS_LIB_INCLUDE_DIRS}
  GEN gen_corpus.sh GEN_ARGS $<TARGET_FILE:ds_mkelf>)

# The directory index (lib/store/dirindex.c) on the same seeds: each
# input is a file of a private directory, read through libelf's pread()
# path.  A few thousand inputs, two scans each.
ds_fuzz(dirindex MUTATIONS 60 SOURCES ${CMAKE_SOURCE_DIR}/fuzz/fuzzfile.c
  GEN gen_corpus.sh GEN_ARGS $<TARGET_FILE:ds_mkelf>)

# The symbolize request-line parser: a committed text corpus (no ELF in
# it), cheap inputs, many mutations.
ds_fuzz(symline MUTATIONS 2000)

# The whole symbolize path on arbitrary bytes as an ELF file.  Each input
# is a full ELF + DWARF parse and index build, so few mutations per seed
# (~20 seeds x 120: about 5 s with ASan).
ds_fuzz(symelf MUTATIONS 120 SOURCES ${CMAKE_SOURCE_DIR}/fuzz/fuzzfile.c
  GEN gen_symelf_corpus.sh ENV DEBUGINFOD_URLS=)

# The perf.data reader.  Seeds are generated (a recording holds this
# machine's paths): a perf record of `true` when perf works here,
# hand-built files, both byte orders, cut and corrupted copies: ~175 seeds
# x 400 mutations, about 70,000 inputs in 2 s with ASan.
ds_fuzz(perfdata MUTATIONS 400 GEN gen_perfdata_corpus.sh)
# The same corpus through the whole CLI (buildid-list, report --no-fetch,
# prefetch with no servers): what the tool does with what the reader
# accepts, under the sanitizers too.  ~1,000 processes: some 20 s, 50 s
# with ASan.
add_test(NAME fuzz_perfdata_cli
  COMMAND bash ${CMAKE_SOURCE_DIR}/fuzz/replay_cli.sh ${DS_FUZZ_CORPUS_perfdata})
set_tests_properties(fuzz_perfdata_cli PROPERTIES
  FIXTURES_REQUIRED fuzz_perfdata_corpus TIMEOUT 600 SKIP_RETURN_CODE 77
  ENVIRONMENT "${DS_TEST_ENV}")

# The saved symbol index (lib/symbolize/symfile.c, and symindex.c on what it
# accepts).  Seeds: containers written from the format's description by
# gen_symfile_corpus.sh (Python), and real indexes of small programs saved
# by `dsostore index` when the compilers are here.
ds_fuzz(symfile MUTATIONS 300 INCLUDE ${DS_LIB_INCLUDE_DIRS}
  GEN gen_symfile_corpus.sh GEN_ARGS $<TARGET_FILE:fuzz_symfile_replay>
  GEN_ENV ${DS_TEST_ENV})

# Go's .gopclntab reader (lib/symbolize/gopclntab.c).  Seeds: the hand-built tables
# of mkgotab.h (every layout, both byte orders, 32 and 64 bit) and, when go
# is installed, the tables of a small program built for amd64 and 386.
ds_fuzz(gopclntab MUTATIONS 300 INCLUDE ${DS_LIB_INCLUDE_DIRS}
  GEN gen_gopclntab_corpus.sh GEN_ARGS $<TARGET_FILE:ds_mkgotab>)

# The .dwp unit index (lib/symbolize/dwarf_split.c): the indexes of real packages
# made by dwp and llvm-dwp-14 (when here) and hand-made ones, ~60 seeds x
# 2000 mutations, a second or two.
ds_fuzz(dwp MUTATIONS 2000 INCLUDE ${DS_LIB_INCLUDE_DIRS} GEN gen_dwp_corpus.sh)

# The kernel's readers: /proc/kallsyms text and the kallsyms cache
# file (lib/live/kernel.c).  A committed text corpus (no ELF in it).
ds_fuzz(kallsyms MUTATIONS 3000 INCLUDE ${DS_LIB_INCLUDE_DIRS})

# The live-process normalizer's text readers (lib/live/normalize.c): /proc/PID/maps and
# JIT perf maps.  A committed text corpus.
ds_fuzz(procmaps MUTATIONS 3000 INCLUDE ${DS_LIB_INCLUDE_DIRS})

# perf's config syntax, raw ELF notes and /proc/modules lines
# (lib/common/perfconfig.c, lib/live/kernel.c, lib/live/ksym.c): a committed corpus.
ds_fuzz(kconf MUTATIONS 3000 INCLUDE ${DS_LIB_INCLUDE_DIRS})

# A debuginfod server's /metadata answer (lib/debuginfod/metadata.c), and
# its glob matcher against glibc's fnmatch(): a committed text corpus.
ds_fuzz(metadata MUTATIONS 3000 INCLUDE ${DS_LIB_INCLUDE_DIRS})
# The IMA signature a debuginfod server sends (lib/debuginfod/ima.c): the
# header block as the fetcher keeps it, the signature's hex parsed.  A
# committed text corpus (fuzz/corpus/imasig/sha256 holds an evmctl
# ima_sign signature).
ds_fuzz(imasig MUTATIONS 3000 INCLUDE ${DS_LIB_INCLUDE_DIRS})

# The .ko relocation of symbolize --kernel (lib/live/ksym.c): seeds compiled
# at test time (no ELF committed), a few hundred mutations each.
ds_fuzz(ko MUTATIONS 400 INCLUDE ${DS_LIB_INCLUDE_DIRS} GEN gen_ko_corpus.sh)

# The folded-stack reader of dsostore flamegraph (tools/cli_folded.c): a
# committed text corpus, many mutations, a second or two.  The harness
# carries tools/cli_folded.c itself (the CLI's code, not the library's).
ds_fuzz(folded MUTATIONS 3000 SOURCES ${CMAKE_SOURCE_DIR}/tools/cli_folded.c
  INCLUDE ${CMAKE_SOURCE_DIR}/tools)

# annotate's source text (tools/cli_srctext.c: what a debuginfod server sends,
# split into lines and written into JSON) and the library's terminal
# escaping of it (ds_term_write(), lib/common/termesc.c).  A committed text
# corpus.
ds_fuzz(srctext MUTATIONS 3000 SOURCES ${CMAKE_SOURCE_DIR}/tools/cli_srctext.c
  INCLUDE ${CMAKE_SOURCE_DIR}/tools ${CMAKE_SOURCE_DIR}/include)

# annotate's disassembly (lib/store/disasm.c): code bytes through capstone
# and our steps around it, per machine (the first byte).  A committed
# corpus of raw instruction bytes (no ELF), many mutations.
ds_fuzz(disasm MUTATIONS 3000 INCLUDE ${DS_LIB_INCLUDE_DIRS})

# The core-file reader (lib/live/core.c): hand-built cores of both classes and
# byte orders, and a real core cut to its headers, notes and first pages
# when this machine writes one; ~20 seeds x 400 mutations.
ds_fuzz(core MUTATIONS 400 GEN gen_core_corpus.sh)

# serve's POST /symbolize request parser and answer writer
# (tools/serve_symreq.c, the CLI's code): text and JSON bodies (the first
# byte picks), a committed corpus, many mutations, a second or two.
ds_fuzz(symreq MUTATIONS 2000 SOURCES ${CMAKE_SOURCE_DIR}/tools/serve_symreq.c
  ${CMAKE_SOURCE_DIR}/tools/cli_srctext.c INCLUDE ${CMAKE_SOURCE_DIR}/tools)
foreach(t fuzz_symreq_replay fuzz_symreq)
  if(TARGET ${t})
    target_link_libraries(${t} PRIVATE PkgConfig::YAJL)
  endif()
endforeach()
