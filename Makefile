# jcode mobile core — build, test, demo, install.
#
#   make            release library: lib/libjcode_mobile.so (Swift stdlib linked statically)
#   make test       every test: swift test, the Swift example host, the C harness, the installed library, the Python suite, sanitizers
#   make check      the edit loop: the Swift suite and the Python tests against the debug build (a few minutes)
#   make goldens    rewrite the golden screens and traces (after a change to the layout or the pictures)
#   make demo       a whole session over real sockets against the fake jcode gateway
#   make install PREFIX=/usr/local
#   make clean

PREFIX      ?= /usr/local
SWIFT       ?= swift
CC          ?= cc
CXX         ?= c++
PYTHON      ?= python3
VERSION     := 0.7.0
SOVERSION   := 1

LIB_DIR     := lib
LIB_NAME    := libjcode_mobile.so
LIB         := $(LIB_DIR)/$(LIB_NAME)
RELEASE_DIR := .build/release
C_BUILD     := harness/c/build
CFLAGS_STRICT := -std=c99 -Wall -Wextra -Werror -pedantic
# The C test programs' shared headers: the JSON reader and the pass/fail counts.
C_CHECKS    := harness/c/json_mini.h harness/c/checks.h
# What the library is built from (the Swift host products and the example are not part of it).
SOURCES     := $(shell find Sources/JcodeMobileJSON Sources/JcodeMobileMarkdown Sources/JcodeMobileToolCards Sources/JcodeMobileWire Sources/JcodeMobileCore Sources/JcodeMobileFFI -name '*.swift') Package.swift linker/jcode_mobile.map

export JCODE_MOBILE_LIB := $(CURDIR)/$(LIB)

.PHONY: all lib goldens test check test-swift test-swift-example test-c test-install test-python header-check demo docs bench bench-swift bench-parse bench-instructions bench-streamed valgrind-installed fuzz fuzz-build install install-python clean deps \
	sanitize test-swift-asan test-swift-tsan test-c-asan test-c-tsan valgrind stress soak smoke-fuzz

all: lib

lib: $(LIB)

$(LIB): $(SOURCES)
	$(SWIFT) build -c release --product jcode_mobile \
		-Xswiftc -static-stdlib \
		-Xlinker --version-script=$(CURDIR)/linker/jcode_mobile.map \
		-Xlinker -soname=$(LIB_NAME).$(SOVERSION)
	mkdir -p $(LIB_DIR)
	# Replace by rename, never in place: a process using the old file keeps it.
	cp $(RELEASE_DIR)/$(LIB_NAME) $(LIB_DIR)/.$(LIB_NAME).$(SOVERSION).tmp
	mv -f $(LIB_DIR)/.$(LIB_NAME).$(SOVERSION).tmp $(LIB_DIR)/$(LIB_NAME).$(SOVERSION)
	ln -sf $(LIB_NAME).$(SOVERSION) $(LIB)
	@echo "built $(LIB); it needs:"; readelf -d $(LIB) | grep NEEDED

# What the Python harness needs beyond the image: the dependencies its
# pyproject.toml declares (aiohttp, jsonschema, cairosvg, Pillow) and its test extras (pytest,
# pytest-xdist and pytest-timeout; wheel and setuptools to install it in a scratch virtualenv), from PyPI when missing.
PY_REQUIREMENTS = $(PYTHON) -c "import tomllib; p = tomllib.load(open('harness/python/pyproject.toml', 'rb'))['project']; \
	print(' '.join(p['dependencies'] + p['optional-dependencies']['test']))"
# Screenshots are drawn by cairo (through cairosvg) in DejaVu Sans and DejaVu Sans Mono: from
# Debian when the machine lacks them.
deps:
	@$(PYTHON) -c "import pytest, xdist, pytest_timeout, aiohttp, jsonschema, cairosvg, PIL, wheel, setuptools" 2>/dev/null || $(PYTHON) -m pip install --quiet $$($(PY_REQUIREMENTS))
	@{ ldconfig -p | grep -q 'libcairo\.so\.2' && fc-list 2>/dev/null | grep -qi 'DejaVu Sans Mono' && fc-list 2>/dev/null | grep -qi 'DejaVu Sans:'; } || \
		{ apt-get update -qq && apt-get install -y -qq libcairo2 fonts-dejavu-core fontconfig; }

# The `jcode-mobile` command and the package, with the built library bundled in.
install-python: lib
	$(PYTHON) -m pip install --quiet ./harness/python

# Every stage in turn, each one's wall time printed as it ends and all of
# them at the end (also when one fails: the stages before it and the one
# that failed). TEST_BESIDE runs from the start beside them: it builds and
# runs its own programs on one core, where the builds and the Swift suite
# leave the second core idle for minutes; its output is printed after the others.
TEST_STAGES := test-swift test-swift-example test-c test-install test-python \
	test-swift-asan test-swift-tsan test-c-asan test-c-tsan valgrind stress soak
TEST_BESIDE := smoke-fuzz
test:
	@begin=$$(date +%s); times=""; status=0; mkdir -p $(C_BUILD); \
	{ start=$$(date +%s); code=0; $(MAKE) --no-print-directory $(TEST_BESIDE) > $(C_BUILD)/beside.log 2>&1 || code=$$?; \
	  echo "$$code $$(( $$(date +%s) - start ))" > $(C_BUILD)/beside.status; } & beside=$$!; \
	for stage in $(TEST_STAGES); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$stage || status=$$?; \
		took=$$(( $$(date +%s) - start )); \
		echo "== make test: $$stage took $$took s"; \
		times="$$times$$(printf '%-20s %5d s' $$stage $$took)\n"; \
		[ $$status -eq 0 ] || break; \
	done; \
	wait $$beside; read code took < $(C_BUILD)/beside.status; \
	echo "== make test: $(TEST_BESIDE), beside the others"; cat $(C_BUILD)/beside.log; \
	echo "== make test: $(TEST_BESIDE) took $$took s (beside the others)"; \
	times="$$times$$(printf '%-20s %5d s (beside)' $(TEST_BESIDE) $$took)\n"; \
	[ $$status -ne 0 ] || [ $$code -eq 0 ] || { status=$$code; stage=$(TEST_BESIDE); }; \
	echo "== make test: stage times"; printf "$$times"; \
	printf '%-20s %5d s\n' total $$(( $$(date +%s) - begin )); \
	[ $$status -eq 0 ] || { echo "== make test: $$stage failed"; exit $$status; }

# The edit loop, about 4 minutes: the Swift suite (debug) and the Python
# tests that need neither the release library nor C programs, run against
# the debug build's library, its assertions on. `make test` runs everything.
CHECK_PY_SKIP := test_screenshots.py test_trace.py test_hostile_server.py test_install.py test_swift_example.py \
	test_demo.py test_docs_walkthrough.py test_cli.py test_version.py
check: deps
	$(SWIFT) build --build-tests
	harness/swift/shards.sh $(SWIFT_SHARDS) .build
	cd harness/python && JCODE_MOBILE_LIB=$(CURDIR)/.build/debug/$(LIB_NAME) $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) \
		$(addprefix --ignore=tests/,$(CHECK_PY_SKIP)) tests

# Everything that checks the library is safe to embed: the Swift suite under
# AddressSanitizer and ThreadSanitizer, the C harness and the stress test
# against ASan (+UBSan in the C code) and TSan builds of the library, valgrind
# on the C harness, a million-call soak, and a short run of every fuzzer.
sanitize: test-swift-asan test-swift-tsan test-c-asan test-c-tsan valgrind stress soak smoke-fuzz

# The Swift suite runs in SWIFT_SHARDS processes at once (harness/swift/shards.sh), one per core.
SWIFT_SHARDS ?= $(shell nproc)
test-swift:
	$(SWIFT) build --build-tests
	harness/swift/shards.sh $(SWIFT_SHARDS) .build

# The Swift host example (Sources/JcodeMobileExample, docs/SWIFT.md) runs a
# whole session over real sockets against the fake gateway. A debug build, so
# it shares .build with `swift test`; the Python suite's schema check needs lib.
test-swift-example: lib deps
	$(SWIFT) build --product jcode-mobile-swift-example
	cd harness/python && JCODE_MOBILE_SWIFT_EXAMPLE="$$($(SWIFT) build --show-bin-path)/jcode-mobile-swift-example" \
		$(PYTHON) -m pytest -q tests/test_swift_example.py

header-check: $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -Iinclude -fsyntax-only -x c include/jcode_mobile.h
	$(CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only -x c++ include/jcode_mobile.h
	$(CXX) -std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only harness/c/header_cxx.cpp

$(C_BUILD):
	mkdir -p $(C_BUILD)

$(C_BUILD)/harness: harness/c/harness.c $(C_CHECKS) include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/harness.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -lpthread -o $@

# Two copies of the library in one process (two plugins each bundling it):
# dlopened, not linked, so the program names the file to copy and load.
$(C_BUILD)/two_copies: harness/c/two_copies.c $(C_CHECKS) | $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L harness/c/two_copies.c -ldl -o $@

# Out of memory under RLIMIT_AS (not under the sanitizers: they need the address space).
$(C_BUILD)/oom: harness/c/oom.c harness/c/in_child.h include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/oom.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -o $@

# Handles that come and go under RLIMIT_AS (not under the sanitizers either).
$(C_BUILD)/handles: harness/c/handles.c harness/c/in_child.h include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/handles.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -o $@

# What large drafts cost in resident memory (figures for docs/LIMITS.md; not a test).
$(C_BUILD)/memory_probe: harness/c/memory_probe.c include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) -O2 $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/memory_probe.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -o $@

# The event stream (subscriptions, waiters, callbacks) from many threads.
$(C_BUILD)/events: harness/c/events.c $(C_CHECKS) include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/events.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -lpthread -o $@

# The harness and the event-stream test record every answer they read; each
# must match the runtime schema the library publishes (jcode_mobile.schema).
test-c: header-check $(C_BUILD)/harness $(C_BUILD)/events $(C_BUILD)/two_copies $(C_BUILD)/oom $(C_BUILD)/handles $(LIB) deps
	JCODE_MOBILE_ANSWERS=$(C_BUILD)/harness-answers.jsonl ./$(C_BUILD)/harness
	JCODE_MOBILE_ANSWERS=$(C_BUILD)/events-answers.jsonl ./$(C_BUILD)/events
	./$(C_BUILD)/two_copies $(LIB_DIR)/$(LIB_NAME).$(SOVERSION)
	./$(C_BUILD)/oom
	./$(C_BUILD)/handles
	cd harness/python && $(PYTHON) -m jcode_mobile.schema $(CURDIR)/$(C_BUILD)/harness-answers.jsonl \
		$(CURDIR)/$(C_BUILD)/events-answers.jsonl
	rm -f $(C_BUILD)/harness-answers.jsonl $(C_BUILD)/events-answers.jsonl

# ---------------------------------------------------------------- sanitizers
# The C side is compiled with the Swift toolchain's clang, whose sanitizer
# runtimes match the ones the instrumented library was built against.
SWIFT_BIN     := $(dir $(realpath $(shell command -v $(SWIFT))))
SWIFT_RUNTIME := $(realpath $(SWIFT_BIN)/../lib/swift/linux)
SAN_CC        := $(SWIFT_BIN)clang
SAN_CFLAGS    := -g -O1 -fno-omit-frame-pointer $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude
# The core is built once per sanitizer, in debug and with its tests: the
# Swift suite runs on that build and the C harness links its library.
ASAN_BUILD    := .build-asan
TSAN_BUILD    := .build-tsan
ASAN_LIB      := $(ASAN_BUILD)/debug
TSAN_LIB      := $(TSAN_BUILD)/debug
# What a sanitizer build is made of: every Swift target, tests included.
SAN_INPUTS    := $(shell find Sources Tests -name '*.swift') Package.swift
SMOKE_FUZZ_SECONDS ?= 10
# (In variables: a literal comma would split the arguments of $(call).)
ASAN_UBSAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined
RPATH         := -Wl,-rpath,

$(ASAN_LIB)/$(LIB_NAME): $(SAN_INPUTS)
	$(SWIFT) build --build-tests --sanitize=address --scratch-path $(ASAN_BUILD)

$(TSAN_LIB)/$(LIB_NAME): $(SAN_INPUTS)
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path $(TSAN_BUILD)

$(C_BUILD)/%-asan: harness/c/%.c $(C_CHECKS) include/jcode_mobile.h $(ASAN_LIB)/$(LIB_NAME) | $(C_BUILD)
	@echo "$(SAN_CC) -fsanitize=address,undefined $< -o $@"
	@$(call QUIET_LINK,$(SAN_CC) $(ASAN_UBSAN) $(SAN_CFLAGS) $< \
		-L$(ASAN_LIB) -ljcode_mobile $(RPATH)$(CURDIR)/$(ASAN_LIB) $(RPATH)$(SWIFT_RUNTIME) -lpthread -o $@)

$(C_BUILD)/%-tsan: harness/c/%.c $(C_CHECKS) include/jcode_mobile.h $(TSAN_LIB)/$(LIB_NAME) | $(C_BUILD)
	@echo "$(SAN_CC) -fsanitize=thread $< -o $@"
	@$(call QUIET_LINK,$(SAN_CC) -fsanitize=thread $(SAN_CFLAGS) $< -L$(TSAN_LIB) -ljcode_mobile \
		-L$(SWIFT_RUNTIME) -ldispatch -lBlocksRuntime $(RPATH)$(CURDIR)/$(TSAN_LIB) $(RPATH)$(SWIFT_RUNTIME) -lpthread -o $@)

# XCTest's own runner objects are reported as leaks under ASan; leaks are
# checked by valgrind and by the fuzzers' LeakSanitizer instead.
test-swift-asan: $(ASAN_LIB)/$(LIB_NAME)
	ASAN_OPTIONS=detect_leaks=0 harness/swift/shards.sh $(SWIFT_SHARDS) $(ASAN_BUILD)

# ThreadSanitizer sees only memory that two threads touch. The tests named in
# TSAN_SKIP stream markdown through the parser and the tree on one thread for
# minutes under TSan (the debug run and ASan check them); the TSan run leaves them out.
TSAN_SKIP := testEverySpecExampleStreamedAsTextDeltasEqualsItsWholeParse|testGeneratedRepliesStreamAsAWholeParseAtEveryChunkSize|testEveryExampleStreamedEqualsItsWholeParse|testALongStyledParagraphStreamedInTokensSendsItsLastRunsOnly|testLongParagraphsWithInlineSyntaxStreamedInTokensEqualAWholeParse|testTheStreamedTreeEqualsATreeBuiltFromScratchAfterEveryDelta
test-swift-tsan: $(TSAN_LIB)/$(LIB_NAME)
	TSAN_OPTIONS=halt_on_error=1 harness/swift/shards.sh $(SWIFT_SHARDS) $(TSAN_BUILD) '$(TSAN_SKIP)'

# The two-copies test dlopens the release library; only its C code is instrumented.
$(C_BUILD)/two_copies-ubsan: harness/c/two_copies.c $(C_CHECKS) | $(C_BUILD)
	$(SAN_CC) -fsanitize=undefined -fno-sanitize-recover=undefined $(SAN_CFLAGS) harness/c/two_copies.c -ldl -o $@

test-c-asan: $(C_BUILD)/harness-asan $(C_BUILD)/events-asan $(C_BUILD)/stress-asan $(C_BUILD)/two_copies-ubsan $(LIB)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/harness/fuzz/lsan.supp ./$(C_BUILD)/harness-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/harness/fuzz/lsan.supp ./$(C_BUILD)/events-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/harness/fuzz/lsan.supp \
		./$(C_BUILD)/stress-asan 1000
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./$(C_BUILD)/two_copies-ubsan $(LIB_DIR)/$(LIB_NAME).$(SOVERSION)

test-c-tsan: $(C_BUILD)/harness-tsan $(C_BUILD)/events-tsan $(C_BUILD)/stress-tsan
	TSAN_OPTIONS=halt_on_error=1 ./$(C_BUILD)/harness-tsan
	TSAN_OPTIONS=halt_on_error=1 ./$(C_BUILD)/events-tsan
	TSAN_OPTIONS=halt_on_error=1 ./$(C_BUILD)/stress-tsan 500

# valgrind (and its headers, which harness/c/instructions.c includes): installed when missing.
valgrind-installed:
	@command -v valgrind >/dev/null && test -f /usr/include/valgrind/callgrind.h || \
		{ apt-get update -qq && apt-get install -y -qq valgrind; }

VALGRIND_CHECK := valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=9 --suppressions=harness/c/valgrind.supp

# The three runs at once (each is one thread under valgrind), each one's
# output kept apart and printed when it ends; the first that failed fails the target.
VALGRIND_RUNS := harness events "two_copies $(LIB_DIR)/$(LIB_NAME).$(SOVERSION)"
valgrind: $(C_BUILD)/harness $(C_BUILD)/events $(C_BUILD)/two_copies valgrind-installed
	@status=0; \
	for run in $(VALGRIND_RUNS); do \
		name=$${run%% *}; \
		echo "$(VALGRIND_CHECK) ./$(C_BUILD)/$$run"; \
		{ $(VALGRIND_CHECK) ./$(C_BUILD)/$$run > $(C_BUILD)/valgrind-$$name.log 2>&1; \
		  echo $$? > $(C_BUILD)/valgrind-$$name.status; } & \
	done; wait; \
	for run in $(VALGRIND_RUNS); do \
		name=$${run%% *}; \
		echo "== valgrind $$name"; cat $(C_BUILD)/valgrind-$$name.log; \
		code=$$(cat $(C_BUILD)/valgrind-$$name.status); \
		[ "$$code" = 0 ] || { echo "== valgrind $$name exited $$code"; status=1; }; \
	done; exit $$status

$(C_BUILD)/stress: harness/c/stress.c include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) -O2 $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/stress.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -lpthread -o $@

stress: $(C_BUILD)/stress
	./$(C_BUILD)/stress 4000

soak: $(C_BUILD)/stress
	./$(C_BUILD)/stress --soak 1000000

smoke-fuzz:
	$(MAKE) fuzz FUZZ_SECONDS=$(SMOKE_FUZZ_SECONDS) FUZZ_BUILD=.build-fuzz-smoke FUZZ_OPT="-Onone -wmo -num-threads 2"

$(C_BUILD)/bench: harness/c/bench.c include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) -O2 $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/bench.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -o $@

$(C_BUILD)/instructions: harness/c/instructions.c include/jcode_mobile.h $(LIB) | $(C_BUILD) valgrind-installed
	$(CC) -O2 $(CFLAGS_STRICT) -Iinclude harness/c/instructions.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -o $@

# The callgrind benchmarks run with Swift's hashing seeded the same in every
# process: with a random seed per process (the default), a figure that hashes
# (the row cache's dictionary) moved by about 1 % from one run of one library
# to the next. Instruction counts are then repeatable to the instruction.
CALLGRIND := SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/dev/null

# Instructions per input (callgrind) of each input whose cost could grow with
# a list it touches, at 1 000 and 100 000 items (harness/c/instructions.c).
INSTRUCTION_KINDS ?= text_delta text_delta_raw text_delta_subscribed set_draft tokens session_renamed_call tap_node permission_request stdin_request session_renamed tool_start outbox queue_interrupt \
	tree hit_test screenshot_svg tap_xy scroll_messages delta_tree_changes history first_tree restore
INSTRUCTION_SIZES ?= 1000 10000 100000
# A delta into a reply in markdown of this many bytes (its cost must not grow with the reply).
REPLY_SIZES ?= 4096 262144
# A tool call's input of this many bytes streamed in 4-byte deltas, each with
# its tree_changes: instructions per input byte, flat when the stream is linear.
TOOL_INPUT_SIZES ?= 32768 131072
bench-instructions: $(C_BUILD)/instructions
	@for kind in $(INSTRUCTION_KINDS); do for size in $(INSTRUCTION_SIZES); do \
		out=$$($(CALLGRIND) \
			./$(C_BUILD)/instructions $$kind $$size 2>&1) || { echo "$$out"; exit 1; }; \
		ir=$$(echo "$$out" | sed -n 's/.*Collected : *//p' | tr -d ,); \
		n=$$(echo "$$out" | sed -n 's/^measured //p'); \
		printf '%-20s %7s items: %9s instructions per input\n' $$kind $$size $$((ir / n)); \
	done; done
	@for kind in reply_delta_tree_changes reply_markdown_delta_tree_changes; do for size in $(REPLY_SIZES); do \
		out=$$($(CALLGRIND) \
			./$(C_BUILD)/instructions $$kind $$size 2>&1) || { echo "$$out"; exit 1; }; \
		ir=$$(echo "$$out" | sed -n 's/.*Collected : *//p' | tr -d ,); \
		n=$$(echo "$$out" | sed -n 's/^measured //p'); \
		printf '%-33s %7s bytes: %9s instructions per input\n' $$kind $$size $$((ir / n)); \
	done; done
	@for kind in tool_input_bash tool_input_write tool_input_edit tool_input_apply_patch tool_input_patch; do for size in $(TOOL_INPUT_SIZES); do \
		out=$$($(CALLGRIND) \
			./$(C_BUILD)/instructions $$kind $$size 2>&1) || { echo "$$out"; exit 1; }; \
		ir=$$(echo "$$out" | sed -n 's/.*Collected : *//p' | tr -d ,); \
		n=$$(echo "$$out" | sed -n 's/^measured //p'); \
		printf '%-33s %7s bytes: %9s instructions per input byte (%s in all)\n' $$kind $$size $$((ir / n)) $$ir; \
	done; done

$(C_BUILD)/streamed: harness/c/streamed.c include/jcode_mobile.h $(LIB) | $(C_BUILD) valgrind-installed
	$(CC) $(CFLAGS_STRICT) -O2 -Iinclude harness/c/streamed.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -o $@

# What an agent writes, streamed in deltas of 1 to 8 bytes with tree_changes
# after each (harness/c/streamed.c): the total at n and 4n bytes (linear: a
# ratio of about 4), and one delta at the end against a plain-words delta.
STREAMED_KINDS ?= words bullets numbered tasks table nested emphasis mixed
STREAMED_SIZE ?= 4096
bench-streamed: $(C_BUILD)/streamed
	@count() { $(CALLGRIND) ./$(C_BUILD)/streamed "$$@" 2>&1 \
		| sed -n 's/.*Collected : *//p' | tr -d ,; }; \
	words=$$(count words $$(($(STREAMED_SIZE) * 4)) tail); \
	printf '%-10s %14s %14s %6s %16s %6s\n' kind "n=$(STREAMED_SIZE)" "4n" ratio "delta at 4n" "/words"; \
	for kind in $(STREAMED_KINDS); do \
		n=$$(count $$kind $(STREAMED_SIZE)); four=$$(count $$kind $$(($(STREAMED_SIZE) * 4))); \
		last=$$(count $$kind $$(($(STREAMED_SIZE) * 4)) tail); \
		printf '%-10s %14s %14s %6s %16s %6s\n' $$kind $$n $$four $$(awk "BEGIN{printf \"%.2f\", $$four/$$n}") \
			$$((last / 100)) $$(awk "BEGIN{printf \"%.2f\", $$last/$$words}"); \
	done

# A field of 1 MiB of each kind (one text_delta, one tool_input delta) and its tree_changes,
# against 1 MiB of plain words: what an agent or a server sends at once stays bounded.
BOUNDED_SIZE ?= 1048576
# For the markdown kinds, also the bytes of the tree_changes answer (the
# nodes the field makes, as JSON) and the cost per byte of it against words'.
bench-bounded: $(C_BUILD)/streamed $(C_BUILD)/instructions
	@count() { $(CALLGRIND) "$$@" 2>&1 \
		| sed -n 's/.*Collected : *//p' | tr -d ,; }; \
	measure() { out=$$($(CALLGRIND) ./$(C_BUILD)/streamed $$1 $(BOUNDED_SIZE) once 2>&1); \
		echo $$(echo "$$out" | sed -n 's/.*Collected : *//p' | tr -d ,) $$(echo "$$out" | sed -n 's/^answer //p'); }; \
	set -- $$(measure words); words=$$1; answer=$$2; \
	printf '%-22s %16s %8s %14s %18s\n' "1 field of $(BOUNDED_SIZE) bytes" instructions "/words" "answer bytes" "/words per byte"; \
	for kind in $(STREAMED_KINDS); do \
		set -- $$(measure $$kind); \
		printf '%-22s %16s %8s %14s %18s\n' $$kind $$1 $$(awk "BEGIN{printf \"%.2f\", $$1/$$words}") $$2 \
			$$(awk "BEGIN{printf \"%.2f\", ($$1/$$2)/($$words/$$answer)}"); \
	done; \
	for tool in bash write edit apply_patch patch; do \
		n=$$(count ./$(C_BUILD)/instructions tool_once_$$tool $(BOUNDED_SIZE)); \
		printf '%-22s %16s %8s\n' tool_input:$$tool $$n $$(awk "BEGIN{printf \"%.2f\", $$n/$$words}"); \
	done

# Speed and memory at 10 … 100 000 transcript entries, then the Python binding's overhead,
# then a streamed delta through the Swift ViewModel.
bench: $(C_BUILD)/bench deps bench-instructions bench-streamed bench-bounded bench-swift bench-parse
	./$(C_BUILD)/bench
	cd harness/python && $(PYTHON) -m jcode_mobile.bench
	$(SWIFT_BENCH)

# The Swift ViewModel path (Sources/JcodeMobileSwiftBench): a release build of
# its own, apart from the library's (built with other flags) and the debug one.
SWIFT_BENCH := .build-bench/release/JcodeMobileSwiftBench
bench-swift:
	$(SWIFT) build -c release --product JcodeMobileSwiftBench --scratch-path .build-bench

# Parsing a ~5 MB markdown document (harness/c/markdown_doc.py, generated at
# build time, not committed): the core's Markdown.parse (Sources/
# JcodeMobileParseBench, -c release) against cmark-gfm 0.29 with the table,
# strikethrough, autolink and tasklist extensions (harness/c/parse_cmark.c,
# from Debian when missing), in the same run. Parse only, both sides.
PARSE_DOC  := $(C_BUILD)/bench-parse.md
PARSE_REPS ?= 9
$(PARSE_DOC): harness/c/markdown_doc.py
	@mkdir -p $(C_BUILD)
	$(PYTHON) harness/c/markdown_doc.py $@ 5
$(C_BUILD)/parse_cmark: harness/c/parse_cmark.c
	@dpkg -s libcmark-gfm-extensions-dev >/dev/null 2>&1 || \
		{ apt-get update -qq && apt-get install -y -qq libcmark-gfm-dev libcmark-gfm-extensions-dev; }
	@mkdir -p $(C_BUILD)
	$(CC) -O2 -o $@ $< -lcmark-gfm-extensions -lcmark-gfm
bench-parse: $(PARSE_DOC) $(C_BUILD)/parse_cmark
	$(SWIFT) build -c release --product JcodeMobileParseBench --scratch-path .build-bench
	@echo "parse only, no rendering: core = blocks with inline spans (no semantic tree), cmark-gfm = node tree with table/strikethrough/autolink/tasklist"
	@core=$$(.build-bench/release/JcodeMobileParseBench $(PARSE_DOC) $(PARSE_REPS)); \
	cmark=$$(./$(C_BUILD)/parse_cmark $(PARSE_DOC) $(PARSE_REPS)); \
	printf 'document: %s bytes, median of %s parses\n' $$(wc -c < $(PARSE_DOC)) $(PARSE_REPS); \
	printf 'core Markdown.parse %8s MB/s\ncmark-gfm           %8s MB/s\ncore / cmark-gfm    %8s\n' $$core $$cmark \
		$$(awk "BEGIN{printf \"%.2f\", $$core/$$cmark}")

# The hostile-server tests count instructions with callgrind (harness/c/instructions.c).
# Two worker processes (pytest-xdist): many tests wait on sockets and child processes.
PYTEST_WORKERS ?= 2
test-python: lib deps $(C_BUILD)/instructions
	cd harness/python && $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) --durations=15 tests

# Rewrite the golden pictures (tests/golden/screens: SVG, PNG, RENDERER.json)
# and the golden traces (tests/golden/traces, whose trees carry bounds) from
# the library built now, then check them; look at the new PNGs before
# committing (docs/SCREENSHOTS.md).
goldens: lib deps
	cd harness/python && JCODE_UPDATE_GOLDENS=1 $(PYTHON) -m pytest -q tests/test_screenshots.py tests/test_trace.py \
		-k "(golden and not replaying) or recording"
	cd harness/python && $(PYTHON) -m pytest -q tests/test_screenshots.py tests/test_trace.py

demo: lib deps
	cd harness/python && $(PYTHON) -m jcode_mobile.demo

# ---------------------------------------------------------------- fuzzing
# libFuzzer targets (harness/fuzz/FuzzTargets.swift, one executable), built with swiftc
# -sanitize=fuzzer,address against an instrumented static core. Each runs for
# FUZZ_SECONDS on a working corpus seeded from harness/fuzz/corpus, after
# replaying every saved regression input. Crashes land in fuzz-out/crashes/.
SWIFTC       ?= swiftc
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := .build-fuzz
FUZZ_TARGETS := json app_new dispatch platform_event session server markdown tooldiff
# The core's modules, leaves first (Package.swift): each one an instrumented static library.
module_sources = $(shell find Sources/$(1) -name '*.swift')
FFI_SOURCES  := $(wildcard Sources/JcodeMobileFFI/*.swift)
# The smoke run (make test) builds its own copy unoptimised, in a minute rather than five:
# its saved regressions replay the same, its 10 s per target run about a third as many inputs.
FUZZ_OPT     ?= -O
FUZZ_FLAGS   := -sanitize=fuzzer,address -parse-as-library $(FUZZ_OPT) -g -package-name JcodeMobile
# Runs a link, hiding the sanitizer runtime's harmless "Cannot export local
# symbol" notes but keeping the command's exit status.
QUIET_LINK    = log=$$(mktemp); if $(1) > $$log 2>&1; then s=0; else s=1; fi; \
	grep -v "Cannot export local symbol" $$log || true; rm -f $$log; exit $$s

$(FUZZ_BUILD)/libJcodeMobileJSON.a: $(call module_sources,JcodeMobileJSON)
$(FUZZ_BUILD)/libJcodeMobileMarkdown.a: $(call module_sources,JcodeMobileMarkdown) $(FUZZ_BUILD)/libJcodeMobileJSON.a
$(FUZZ_BUILD)/libJcodeMobileToolCards.a: $(call module_sources,JcodeMobileToolCards) $(FUZZ_BUILD)/libJcodeMobileJSON.a
$(FUZZ_BUILD)/libJcodeMobileWire.a: $(call module_sources,JcodeMobileWire) $(FUZZ_BUILD)/libJcodeMobileJSON.a
$(FUZZ_BUILD)/libJcodeMobileCore.a: $(call module_sources,JcodeMobileCore) \
		$(FUZZ_BUILD)/libJcodeMobileMarkdown.a $(FUZZ_BUILD)/libJcodeMobileToolCards.a $(FUZZ_BUILD)/libJcodeMobileWire.a
$(FUZZ_BUILD)/lib%.a:
	@mkdir -p $(FUZZ_BUILD)
	@echo "swiftc $(FUZZ_FLAGS) … (module $*, instrumented for fuzzing)"
	@$(SWIFTC) $(FUZZ_FLAGS) -emit-library -static -emit-module -module-name $* -I $(FUZZ_BUILD) \
		-emit-module-path $(FUZZ_BUILD)/$*.swiftmodule $(filter %.swift,$^) -o $@

# One executable for every target: JCODE_FUZZ_TARGET names the one a run fuzzes.
$(FUZZ_BUILD)/fuzz: harness/fuzz/FuzzTargets.swift $(FFI_SOURCES) $(FUZZ_BUILD)/libJcodeMobileCore.a
	@echo "swiftc $(FUZZ_FLAGS) … -o $@ (the targets)"
	@$(call QUIET_LINK,$(SWIFTC) $(FUZZ_FLAGS) -module-name JcodeMobileFuzz \
		-I $(FUZZ_BUILD) -L $(FUZZ_BUILD) \
		-lJcodeMobileCore -lJcodeMobileWire -lJcodeMobileToolCards -lJcodeMobileMarkdown -lJcodeMobileJSON $(FFI_SOURCES) harness/fuzz/FuzzTargets.swift -o $@)

fuzz-build: $(FUZZ_BUILD)/fuzz

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz-out/corpus/$$t fuzz-out/crashes harness/fuzz/regressions/$$t; \
		echo "== fuzz $$t: saved regressions"; \
		if ls harness/fuzz/regressions/$$t/* >/dev/null 2>&1; then \
			JCODE_FUZZ_TARGET=$$t LSAN_OPTIONS=suppressions=$(CURDIR)/harness/fuzz/lsan.supp \
			$(FUZZ_BUILD)/fuzz -runs=0 harness/fuzz/regressions/$$t/* > fuzz-out/$$t-regressions.log 2>&1 \
			|| { tail -40 fuzz-out/$$t-regressions.log; exit 1; }; fi; \
		echo "== fuzz $$t: $(FUZZ_SECONDS) s"; \
		JCODE_FUZZ_TARGET=$$t LSAN_OPTIONS=suppressions=$(CURDIR)/harness/fuzz/lsan.supp \
		$(FUZZ_BUILD)/fuzz -max_total_time=$(FUZZ_SECONDS) -dict=harness/fuzz/jcode.dict -max_len=4096 \
			-artifact_prefix=fuzz-out/crashes/$$t- -print_final_stats=1 \
			fuzz-out/corpus/$$t harness/fuzz/corpus/$$t > fuzz-out/$$t.log 2>&1 \
			|| { tail -40 fuzz-out/$$t.log; exit 1; }; \
		grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" fuzz-out/$$t.log | tr '\n' ' '; echo; \
	done

# Regenerates the reference part of docs/ABI.md from the wire definitions.
docs:
	JCODE_UPDATE_DOCS=1 $(SWIFT) test --filter DocumentationTests

# The library loses its debug info but keeps its symbol table: valgrind.supp
# names a Swift runtime function (the one-time initialiser of globals) that
# only the symbol table knows, and crash reports keep function names.
STRIP ?= strip
STRIP_FLAGS ?= --strip-debug
install: lib
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/share/jcode_mobile
	install -m 0755 $(LIB_DIR)/$(LIB_NAME).$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/
	$(STRIP) $(STRIP_FLAGS) $(DESTDIR)$(PREFIX)/lib/$(LIB_NAME).$(SOVERSION)
	ln -sf $(LIB_NAME).$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/$(LIB_NAME)
	install -m 0644 include/jcode_mobile.h $(DESTDIR)$(PREFIX)/include/
	install -m 0644 harness/c/valgrind.supp $(DESTDIR)$(PREFIX)/share/jcode_mobile/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' jcode_mobile.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/jcode_mobile.pc

# A C host built against `make install PREFIX=<tmp>` with pkg-config loads the
# installed library without LD_LIBRARY_PATH and is clean under valgrind with
# the installed suppressions (harness/c/test_install.sh).
test-install: lib
	@command -v pkg-config >/dev/null || { apt-get update -qq && apt-get install -y -qq pkg-config; }
	@command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
	CC="$(CC)" MAKE="$(MAKE)" harness/c/test_install.sh

clean:
	rm -rf .build .build-* fuzz-out $(LIB_DIR) $(C_BUILD) harness/python/.pytest_cache harness/python/build \
		harness/python/*.egg-info harness/python/jcode_mobile/_lib
	find harness/python -name __pycache__ -type d -exec rm -rf {} +
