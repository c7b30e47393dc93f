# Set-up and everyday commands. `make run` and `make test` work on a fresh
# Debian 12 machine as root: they install what is missing first.
BUILD      ?= build
SAN_BUILD  ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)

DEBIAN_PACKAGES := cmake ninja-build g++ clang-14 llvm-14-dev llvm-14-tools \
  libclang-rt-14-dev antlr4 libantlr4-runtime-dev libfmt-dev libboost-dev \
  libgtest-dev libbenchmark-dev nlohmann-json3-dev python3 clang-format-14 \
  libopenmpi-dev openmpi-bin python3-jsonschema zsh vim \
  nodejs node-vega esbuild chromium fonts-liberation fonts-dejavu-core \
  python3-pil

PREFIX     ?= /usr/local

.PHONY: run test deps build install bench test-sanitize build-sanitize fuzz clean

deps:
	@./utils/install-deps.sh $(DEBIAN_PACKAGES)

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/bin/mlsc eval examples/quickstart.mls

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Installs mlsc under $(PREFIX) (default /usr/local; DESTDIR stages it):
# bin/mlsc, share/mlsc/{stdlib,registries}, share/doc/mlsc
# (docs/driver.md, "Installing").
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Benchmarks: one `name: value` line per figure (docs/performance.md).
bench: build
	python3 bench/eval_latency.py --mlsc $(BUILD)/bin/mlsc
	python3 bench/eval_latency.py --mlsc $(BUILD)/bin/mlsc --all-registries
	./$(BUILD)/bin/mlsc_query_bench bench/query_bench.mls
	./$(BUILD)/bin/mlsc_sim_bench bench/sim_bench.mls
	python3 bench/search_bench.py --mlsc $(BUILD)/bin/mlsc
	python3 bench/tpot_spread_bench.py --mlsc $(BUILD)/bin/mlsc
	python3 bench/mpi_scaling.py --mlsc $(BUILD)/bin/mlsc
	python3 bench/trace_bench.py --mlsc $(BUILD)/bin/mlsc

# Address + undefined-behaviour sanitizers over the whole suite (CI runs it).
build-sanitize: deps
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMLSC_SANITIZE=ON
	cmake --build $(SAN_BUILD) -j $(JOBS)

test-sanitize: build-sanitize
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# libFuzzer targets (clang-14): FUZZ_TARGET is frontend, pipeline or
# queries; FUZZ_SECONDS=600 for a soak, FUZZ_RUNS=1000000 for a count;
# FUZZ_ASAN=OFF (in its own FUZZ_BUILD) for speed without AddressSanitizer,
# FUZZ_TRACE_CMP=OFF for no comparison tracing past the front end.
# Seeds: fuzz/corpus, fuzz/regressions and every .mls file of the tree.
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?= -1
FUZZ_TARGET  ?= frontend
FUZZ_ASAN    ?= ON
FUZZ_TRACE_CMP ?= ON
fuzz: deps
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -G Ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLSC_FUZZ=ON -DMLSC_TESTS=OFF \
	  -DMLSC_FUZZ_ASAN=$(FUZZ_ASAN) -DMLSC_FUZZ_TRACE_CMP=$(FUZZ_TRACE_CMP)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target mlsc_fuzz_$(FUZZ_TARGET)
	rm -rf $(FUZZ_BUILD)/seeds && mkdir -p $(FUZZ_BUILD)/seeds \
	  $(FUZZ_BUILD)/corpus-$(FUZZ_TARGET)
	git ls-files '*.mls' | while read -r f; do \
	  cp "$$f" "$(FUZZ_BUILD)/seeds/$$(echo "$$f" | tr / _)"; done
	MLSC_DATA_DIR=$(CURDIR) ./$(FUZZ_BUILD)/fuzz/mlsc_fuzz_$(FUZZ_TARGET) \
	  -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -max_len=1024 \
	  -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 -entropic=0 \
	  -artifact_prefix=$(FUZZ_BUILD)/ -dict=fuzz/mls.dict \
	  $(FUZZ_BUILD)/corpus-$(FUZZ_TARGET) $(FUZZ_BUILD)/seeds

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(FUZZ_BUILD)
