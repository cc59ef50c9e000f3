# jcode mobile core — build, test, demo, install.
#
#   make            release library: lib/libjcode_mobile.so (Swift stdlib linked statically)
#   make test       every test: swift test, the C harness, the Python suite
#   make demo       a scripted session against the harness's fake jcode backend
#   make install PREFIX=/usr/local
#   make clean

PREFIX      ?= /usr/local
SWIFT       ?= swift
CC          ?= cc
CXX         ?= c++
PYTHON      ?= python3
VERSION     := 0.1.0
SOVERSION   := 1

LIB_DIR     := lib
LIB_NAME    := libjcode_mobile.so
LIB         := $(LIB_DIR)/$(LIB_NAME)
RELEASE_DIR := .build/release
C_BUILD     := harness/c/build
CFLAGS_STRICT := -std=c99 -Wall -Wextra -Werror -pedantic
SOURCES     := $(shell find Sources -name '*.swift') Package.swift linker/jcode_mobile.map

export JCODE_MOBILE_LIB := $(CURDIR)/$(LIB)

.PHONY: all lib test test-swift test-c test-python header-check demo docs bench install clean deps

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

# What the tests need beyond the image: pytest (normally preinstalled).
deps:
	@$(PYTHON) -c "import pytest" 2>/dev/null || $(PYTHON) -m pip install --quiet pytest

test: test-swift test-c test-python

test-swift:
	$(SWIFT) test

header-check: $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -Iinclude -fsyntax-only -x c include/jcode_mobile.h
	$(CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only -x c++ include/jcode_mobile.h
	$(CXX) -std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only harness/c/header_cxx.cpp

$(C_BUILD):
	mkdir -p $(C_BUILD)

$(C_BUILD)/harness: harness/c/harness.c include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/harness.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -lpthread -o $@

test-c: header-check $(C_BUILD)/harness
	./$(C_BUILD)/harness

$(C_BUILD)/bench: harness/c/bench.c include/jcode_mobile.h $(LIB) | $(C_BUILD)
	$(CC) -O2 $(CFLAGS_STRICT) -D_POSIX_C_SOURCE=200809L -Iinclude harness/c/bench.c \
		-L$(LIB_DIR) -ljcode_mobile -Wl,-rpath,$(CURDIR)/$(LIB_DIR) -o $@

# Speed and memory at 10 … 100 000 transcript entries, then the Python binding's overhead.
bench: $(C_BUILD)/bench deps
	./$(C_BUILD)/bench
	cd harness/python && $(PYTHON) -m jcode_mobile.bench

test-python: lib deps
	cd harness/python && $(PYTHON) -m pytest -q tests

demo: lib
	cd harness/python && $(PYTHON) -m jcode_mobile.demo

# Regenerates the reference part of docs/ABI.md from the wire definitions.
docs:
	JCODE_UPDATE_DOCS=1 $(SWIFT) test --filter DocumentationTests

install: lib
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(LIB_DIR)/$(LIB_NAME).$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(LIB_NAME).$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/$(LIB_NAME)
	install -m 0644 include/jcode_mobile.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' jcode_mobile.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/jcode_mobile.pc

clean:
	rm -rf .build $(LIB_DIR) $(C_BUILD) harness/python/.pytest_cache
	find harness/python -name __pycache__ -type d -exec rm -rf {} +
