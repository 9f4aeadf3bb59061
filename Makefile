# kmem: thin wrapper around CMake and the scripts in scripts/.
#
#   make                  configure + build into build/ (-O2 -g, asserts on)
#   make test             build/ suite, then ASan+UBSan (build-asan/) whole suite,
#                         then TSan (build-tsan/) concurrency tests; see scripts/test.sh
#   make test-main | test-asan | test-tsan   one stage of the above
#   make run ARGS="..."   build, then build/bin/kmem-run ARGS  (scripts/run.sh)
#   make bench            build, then every build/bin/bench_*  (scripts/bench.sh)
#   make install PREFIX=/dir   (default /usr/local; DESTDIR honoured)
#   make clean            remove build*/ and report/

BUILD  ?= build
PREFIX ?= /usr/local
JOBS   ?= 2
CMAKE  ?= cmake
ARGS   ?=

export JOBS
MAKEFLAGS += --no-print-directory

.PHONY: all build test test-main test-asan test-tsan run bench install clean

all: build

$(BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(BUILD)

# cmake --build re-runs the configure step itself when a glob changes.
build: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j$(JOBS)

test:
	bash scripts/install-deps.sh
	bash scripts/test.sh

test-main test-asan test-tsan:
	bash scripts/test.sh $(@:test-%=%)

run:
	bash scripts/install-deps.sh --bench --best-effort
	bash scripts/run.sh $(ARGS)

bench:
	bash scripts/install-deps.sh --bench --best-effort
	bash scripts/bench.sh

install: build
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build*/ report/
