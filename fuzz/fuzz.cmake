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

# libFuzzer builds (scripts/fuzz configures a clang build with -DDS_FUZZ=ON
# and the library instrumented with -fsanitize=fuzzer-no-link).
option(DS_FUZZ "Build the libFuzzer harnesses (clang only)" OFF)
if(DS_FUZZ)
  add_executable(fuzz_buildid ${CMAKE_SOURCE_DIR}/fuzz/fuzz_buildid.c)
  target_compile_options(fuzz_buildid PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_buildid PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_buildid PRIVATE dsostore_static)
endif()
