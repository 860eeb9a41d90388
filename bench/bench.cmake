# Benchmarks: built with everything else, run by `make bench` (scripts/bench),
# never by CTest (they take tens of seconds and want a quiet machine).
# Programs go to ${CMAKE_BINARY_DIR}/bench/.

# ds_bench(NAME [extra link targets...]): bench/NAME.c and the shared
# bench/benchutil.c linked with the static library, so that the calls
# measured are the library's real code.
function(ds_bench name)
  add_executable(${name} ${CMAKE_SOURCE_DIR}/bench/${name}.c ${CMAKE_SOURCE_DIR}/bench/benchutil.c)
  target_link_libraries(${name} PRIVATE dsostore_static ${ARGN})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endfunction()

# The peer bench_store compares with: the elfutils debuginfod client.  Without
# it the bench still builds and prints its rows as n/a.
pkg_check_modules(LIBDEBUGINFOD QUIET IMPORTED_TARGET libdebuginfod)

ds_bench(bench_store m)
if(LIBDEBUGINFOD_FOUND)
  target_link_libraries(bench_store PRIVATE PkgConfig::LIBDEBUGINFOD)
  target_compile_definitions(bench_store PRIVATE DS_HAVE_LIBDEBUGINFOD=1)
else()
  message(STATUS "libdebuginfod not found: bench_store will not compare with it")
endif()

# bench_fetch: dsostore's fetcher against debuginfod-find and libdebuginfod
# on dsserver (run by scripts/bench, which gives it DSOSTORE and DS_BUILD).
ds_bench(bench_fetch m)
if(LIBDEBUGINFOD_FOUND)
  target_link_libraries(bench_fetch PRIVATE PkgConfig::LIBDEBUGINFOD)
  target_compile_definitions(bench_fetch PRIVATE DS_HAVE_LIBDEBUGINFOD=1)
endif()

# bench_symindex: the symbol index build alone, on the files given
# (bench_symbolize.sh passes its targets); internal calls, so lib/ too.
ds_bench(bench_symindex)
target_include_directories(bench_symindex PRIVATE ${DS_LIB_INCLUDE_DIRS})

# bench_normalize: a live process's addresses normalized and symbolized
# (bench_normalize.sh makes the process and its 1M samples).
ds_bench(bench_normalize)

# serve_load: bench_serve.sh's load generator for its federated misses, a
# libcurl multi driver (bench/serve_load.c says why not curl -Z).  Linked
# with libcurl (the top level found it; the library only loads it).
add_executable(serve_load ${CMAKE_SOURCE_DIR}/bench/serve_load.c ${CMAKE_SOURCE_DIR}/bench/benchutil.c)
target_link_libraries(serve_load PRIVATE PkgConfig::CURL)
set_target_properties(serve_load PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
