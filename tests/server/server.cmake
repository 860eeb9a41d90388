# dsserver, the fault-injecting debuginfod test server, and its
# self-test.  Included from tests/tests.cmake; the binary lands in the build
# directory, so tests find it as $DSSERVER or $DS_BUILD/dsserver.
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
pkg_check_modules(DSSERVER_ZLIB REQUIRED IMPORTED_TARGET zlib)

add_executable(dsserver
  ${CMAKE_SOURCE_DIR}/tests/server/dsserver.c
  ${CMAKE_SOURCE_DIR}/tests/server/fault.c
  ${CMAKE_SOURCE_DIR}/tests/server/http.c
  ${CMAKE_SOURCE_DIR}/tests/server/index.c
  ${CMAKE_SOURCE_DIR}/tests/server/zbody.c)
target_link_libraries(dsserver PRIVATE PkgConfig::MHD PkgConfig::LIBELF PkgConfig::DSSERVER_ZLIB Threads::Threads)

# Every test defined so far (the fetcher tests among them) gets DSSERVER too.
get_property(_ds_tests DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY TESTS)
foreach(_t ${_ds_tests})
  set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT "DSSERVER=$<TARGET_FILE:dsserver>")
endforeach()

add_test(NAME server_selftest COMMAND bash ${CMAKE_SOURCE_DIR}/tests/server/selftest.sh)
set(_ds_server_env ${DS_TEST_ENV} "DSSERVER=$<TARGET_FILE:dsserver>")
set_tests_properties(server_selftest PROPERTIES
  ENVIRONMENT "${_ds_server_env}" SKIP_RETURN_CODE 77 TIMEOUT 120)
