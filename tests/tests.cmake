# The one place that registers the tests (included from CMakeLists.txt).
# Every tests/unit/test_*.c is a test program linked with the library;
# every tests/cli/*.sh and tests/tree/*.sh is a shell test.  All get, in
# their environment:
#   DSOSTORE   the CLI        DS_BUILD  the build dir    DS_SRC  the source dir
# A test that needs something this machine lacks exits 77 (skipped).
# tests/README.md says what each folder of tests/ holds.
set(DS_TEST_ENV
  "DSOSTORE=$<TARGET_FILE:dsostore_cli>"
  "DS_BUILD=${CMAKE_BINARY_DIR}"
  "DS_SRC=${CMAKE_SOURCE_DIR}"
  "DS_SANITIZE=${SANITIZE}"
  # Never the user's servers or cache: tests that want them set their own.
  "DEBUGINFOD_URLS="
  "DEBUGINFOD_CACHE_PATH=${CMAKE_BINARY_DIR}/test-default-cache"
  "PERF_BUILDID_DIR=${CMAKE_BINARY_DIR}/test-default-perf-cache"
  # Saved symbol indexes of local debuginfo: not in the user's ~/.cache.
  "DSOSTORE_SYMINDEX_PATH=${CMAKE_BINARY_DIR}/test-default-symindex")

file(GLOB DS_TEST_C CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/unit/test_*.c)
foreach(src ${DS_TEST_C})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src} ${CMAKE_SOURCE_DIR}/tests/unit/testutil.c)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(${name} PRIVATE dsostore_static)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${DS_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()

# Helpers the shell tests run (tests/lib/; not tests themselves).
add_executable(ds_symstats ${CMAKE_SOURCE_DIR}/tests/lib/symstats.c)
target_link_libraries(ds_symstats PRIVATE dsostore_static)
add_executable(ds_perfchains ${CMAKE_SOURCE_DIR}/tests/lib/perfchains.c)
target_link_libraries(ds_perfchains PRIVATE dsostore_static)
add_executable(ds_disasm ${CMAKE_SOURCE_DIR}/tests/lib/disasm.c)
target_link_libraries(ds_disasm PRIVATE dsostore_static)

# test_symindex also reaches inside: the index's parts (lib/symbolize/symindex.h).
target_include_directories(test_symindex PRIVATE ${DS_LIB_INCLUDE_DIRS})
# test_gopclntab reads Go tables through lib/symbolize/symindex.h too.
target_include_directories(test_gopclntab PRIVATE ${DS_LIB_INCLUDE_DIRS})
# test_symfile (the saved index's container) and test_perfconfig (perf's
# config parser) call the library's private functions.
target_include_directories(test_symfile PRIVATE ${DS_LIB_INCLUDE_DIRS})
# test_leb reads DWARF's LEB128 with the reader's own inline functions.
target_include_directories(test_leb PRIVATE ${DS_LIB_INCLUDE_DIRS})
target_include_directories(test_perfconfig PRIVATE ${DS_LIB_INCLUDE_DIRS})
# test_serve_symreq: the CLI's /symbolize request parser and answer writer
# (tools/serve_symreq.c, without the HTTP layer).
target_sources(test_serve_symreq PRIVATE ${CMAKE_SOURCE_DIR}/tools/serve_symreq.c
  ${CMAKE_SOURCE_DIR}/tools/cli_srctext.c)
target_include_directories(test_serve_symreq PRIVATE ${CMAKE_SOURCE_DIR}/tools)
target_link_libraries(test_serve_symreq PRIVATE PkgConfig::YAJL)

# Third-party corpora (tests/corpus/NAME.bash, see tl_corpus in
# tests/lib/testlib.bash): each is built by a test of its own, corpus_NAME,
# with a longer timeout, which every shell test that says `tl_corpus NAME`
# requires: a test's 300 s are its own, not a compiler's run of minutes.
file(GLOB DS_CORPUS_RECIPES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/corpus/*.bash)
foreach(recipe ${DS_CORPUS_RECIPES})
  get_filename_component(corpus ${recipe} NAME_WE)
  add_test(NAME corpus_${corpus} COMMAND bash -c
    ". \"$DS_SRC/tests/lib/testlib.bash\" && tl_corpus ${corpus} >/dev/null")
  set_tests_properties(corpus_${corpus} PROPERTIES ENVIRONMENT "${DS_TEST_ENV}"
    SKIP_RETURN_CODE 77 TIMEOUT 1500 FIXTURES_SETUP corpus_${corpus})
endforeach()

# Shell tests: tests/cli/*.sh (the CLI against its oracles) and
# tests/tree/*.sh (the source tree itself; the folder may be empty or
# absent).  A test is named after its file, so names are unique across
# both folders.
file(GLOB DS_TEST_SH CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/tests/cli/*.sh
  ${CMAKE_SOURCE_DIR}/tests/tree/*.sh)
foreach(src ${DS_TEST_SH})
  get_filename_component(name ${src} NAME_WE)
  add_test(NAME ${name} COMMAND bash ${src})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${DS_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 300)
  file(STRINGS ${src} uses REGEX "tl_corpus [a-z0-9_]+")
  foreach(line ${uses})
    string(REGEX MATCHALL "tl_corpus [a-z0-9_]+" calls "${line}")
    foreach(call ${calls})
      string(REPLACE "tl_corpus " "" corpus "${call}")
      set_property(TEST ${name} APPEND PROPERTY FIXTURES_REQUIRED corpus_${corpus})
    endforeach()
  endforeach()
endforeach()

# The fault-injecting debuginfod test server (tests/server/) has its own
# rules; every test registered above gets DSSERVER from them.
if(EXISTS ${CMAKE_SOURCE_DIR}/tests/server/server.cmake)
  include(${CMAKE_SOURCE_DIR}/tests/server/server.cmake)
endif()

# examples/agent.c, built against the shared library as a user builds it;
# tests/cli/example_agent.sh runs it (and the next) on a live process (against addr2line).
add_executable(ds_example_agent ${CMAKE_SOURCE_DIR}/examples/agent.c)
target_include_directories(ds_example_agent PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(ds_example_agent PRIVATE dsostore)
# examples/symbolize_pid.c, the one call (ds_symbolize_pid()), likewise.
add_executable(ds_example_symbolize_pid ${CMAKE_SOURCE_DIR}/examples/symbolize_pid.c)
target_include_directories(ds_example_symbolize_pid PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(ds_example_symbolize_pid PRIVATE dsostore)
# test_metadata checks the glob matcher (lib/debuginfod/metadata.c's
# private ds__metadata_glob) against fnmatch().
target_include_directories(test_metadata PRIVATE ${DS_LIB_INCLUDE_DIRS})
