# Thin wrapper around CMake so that the README's commands are short.
#   make            build (build/dsostore, build/libdsostore.so)
#   make check      build and run every test
#   make demo       the main job, on this machine
#   make bench      benchmarks against the peers, printed as tables
#   SANITIZE=address,undefined make check    (or SANITIZE=thread)
#   make install PREFIX=/usr/local DESTDIR=

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

.PHONY: all deps configure check demo bench install fuzz clean format

all: configure
	cmake --build $(BUILD) -j$(JOBS)

deps:
	@scripts/install-deps

configure: deps
	@test -f $(BUILD)/CMakeCache.txt && grep -q "^SANITIZE:STRING=$(SANITIZE)$$" $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSANITIZE=$(SANITIZE) \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null

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
	clang-format -i include/*.h lib/*.[ch] tools/*.[ch] tests/unit/*.[ch] tests/lib/*.[ch] fuzz/*.[ch] bench/*.[ch]

clean:
	rm -rf build build-*
