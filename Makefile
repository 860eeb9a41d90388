# Thin wrapper around CMake so that the README's commands are short.
#   make            build (build/dsostore, build/libdsostore.so); only checks
#                   that the build's packages are here: when one is missing
#                   it prints the apt-get command and fails
#   make deps       install the build's packages (as root)
#   make check      build and run every test
#   make demo       the main job, on this machine
#   make bench      benchmarks against the peers, printed as tables
#   SANITIZE=address,undefined make check    (or SANITIZE=thread)
#   make install PREFIX=/usr/local DESTDIR=
# make check, demo and bench first install what they need beyond the build
# (scripts/install-deps check, demo, bench: as root with apt-get; otherwise
# it prints the command and fails).
#
# A build directory is configured once (Ninja, -Werror), with only the
# library and the CLI; a goal that needs more turns its part on there, for
# good: check the tests, the fuzz replays and the benchmarks, demo the tests
# (for the test server dsserver), bench the benchmarks and the tests.

SANITIZE ?=
MAKEFLAGS += --no-print-directory
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
ifeq ($(SANITIZE),)
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
else
BUILD ?= build-$(subst $(comma),-,$(SANITIZE))
BUILD_TYPE ?= Debug
endif
comma := ,

# The parts beyond the library and the CLI that the goals need (CMake's
# DS_BUILD_*), and the packages to install for them.
PARTS := $(if $(filter check demo bench,$(MAKECMDGOALS)),TESTS) \
	$(if $(filter check,$(MAKECMDGOALS)),FUZZ) $(if $(filter check bench,$(MAKECMDGOALS)),BENCH)
DEPS := $(or $(filter check demo bench,$(MAKECMDGOALS)),--check build)

.PHONY: all deps configure check demo bench install fuzz clean format

all: configure
	cmake --build $(BUILD) -j$(JOBS)

deps:
	@scripts/install-deps build

configure:
	@scripts/install-deps $(DEPS)
	@cache=$(BUILD)/CMakeCache.txt; \
	if [ ! -f $$cache ]; then \
	  set -- -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSANITIZE=$(SANITIZE) \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DDS_WERROR=ON \
	    -DDS_BUILD_TESTS=OFF -DDS_BUILD_FUZZ=OFF -DDS_BUILD_BENCH=OFF; \
	elif ! grep -q "^SANITIZE:STRING=$(SANITIZE)$$" $$cache; then \
	  set -- -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSANITIZE=$(SANITIZE) -DCMAKE_INSTALL_PREFIX=$(PREFIX); \
	elif [ ! -f $(BUILD)/build.ninja ] && [ ! -f $(BUILD)/Makefile ]; then \
	  set -- -DSANITIZE=$(SANITIZE); \
	else \
	  set --; \
	fi; \
	for p in $(PARTS); do \
	  grep -q "^DS_BUILD_$$p:[A-Z]*=ON$$" $$cache 2>/dev/null || set -- "$$@" -DDS_BUILD_$$p=ON; \
	done; \
	[ $$# -eq 0 ] || cmake -S . -B $(BUILD) "$$@" >/dev/null

check: all
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

demo: all
	@scripts/demo $(BUILD)

bench: all
	@scripts/bench $(BUILD)

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

fuzz:
	@scripts/fuzz

format:
	clang-format -i include/*.h lib/*/*.[ch] tools/*.[ch] tests/unit/*.[ch] tests/lib/*.[ch] fuzz/*.[ch] bench/*.[ch]

clean:
	rm -rf build build-*
