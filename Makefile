# cabbpf build. Quiet by default; `make V=1` shows every command.
#   make            build ./cabbpf
#   make check      build and run every test suite (unit + real-kernel integration),
#                   after scripts/layers.sh (no include from a floor to one above)
#   make asan-check the unit suites under AddressSanitizer + UBSan
#   make tsan-check cab/ and the loader's threads under ThreadSanitizer
#   make bench      build the benchmarks under bench/
#   make stress     every suite 50 times under two CPU hogs (flake hunt;
#                   STRESS_SUITES, STRESS_RUNS, HOGS: scripts/stress.sh)
#   make fuzz       the recording reader's fuzz harness under ASan + UBSan
#   make vmtest     the kernel matrix: the cases of tests/vm/cases in QEMU
#                   guests of Debian's kernels (VMTEST_KERNELS, VMTEST_CASES,
#                   ...: tests/vm/vmtest.sh; needs root)
.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

OUT       ?= .output
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= bpftool
ARCH      := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
SANFLAGS  ?=
OPT       ?= -O2

PKGS      := libbpf libelf libdw zlib libzstd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CAPSTONE_LIBS := $(shell pkg-config --libs capstone 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check json-c libpng 2>/dev/null)

WARN      := -Wall -Wextra -Werror
CFLAGS    := $(OPT) -g -std=gnu11 $(WARN) -D_GNU_SOURCE -I. -Iinclude -I$(OUT) -I$(OUT)/proto \
             $(PKG_CFLAGS) $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS   := $(SANFLAGS) $(EXTRA_LDFLAGS)
LDLIBS    := $(PKG_LIBS) $(CAPSTONE_LIBS) -lprotobuf-c -liberty -lpthread -lm

# pprof's schema, from Debian's golang-github-google-pprof-dev, compiled with
# protoc-c (protobuf-c-compiler) at build time: --pprof (user/report/pprof.c).
PPROF_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
PROTO_C   := $(OUT)/proto/profile.pb-c.c
PROTO_H   := $(OUT)/proto/profile.pb-c.h
PROTO_OBJ := $(OUT)/obj/proto/profile.pb-c.o

# EXTRA_BPF_CFLAGS: e.g. -DNAME for a measured variant of a program (touch
# bpf/*.bpf.c: the objects do not depend on the flags).
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror $(EXTRA_BPF_CFLAGS) \
              -Ivmlinux -Iinclude

ifeq ($(V),1)
  Q :=
  msg :=
else
  Q := @
  msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS)) $(OUT)/trace_nosession.skel.h

# Every .c under these floors goes into the library (user/main.c is the
# program): a new file or subfolder needs no list here.
CAB_SRCS  := $(wildcard cab/*.c)
LIB_DIRS  := common cab pipeline analyzers user
LIB_SRCS  := $(filter-out user/main.c,$(shell find $(LIB_DIRS) -name '*.c' | sort))
HDRS      := $(shell find include $(LIB_DIRS) -name '*.h')
LIB_OBJS  := $(patsubst %.c,$(OUT)/obj/%.o,$(LIB_SRCS)) $(PROTO_OBJ)
CAB_OBJS  := $(patsubst %.c,$(OUT)/obj/%.o,$(CAB_SRCS))
LIB       := $(OUT)/libcabbpf.a

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(OUT)/tests/%,$(TEST_SRCS))
# The suites' shared harness (tests/harness.c), linked into every suite.
HARNESS_OBJ := $(OUT)/obj/tests/harness.o
TARGET_SRCS := $(wildcard tests/targets/*.c)

FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))

BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(OUT)/bench/%,$(BENCH_SRCS))

.PHONY: all clean check layers names unit-check integration-check asan-check tsan-check sanitized-integration bench format deps demo stress fuzz fuzz-bins \
	targets vmtest
all: cabbpf

$(OUT) $(OUT)/obj $(OUT)/tests $(OUT)/bench:
	$(Q)mkdir -p $@

$(OUT)/%.bpf.o: bpf/%.bpf.c bpf/*.h include/*.h vmlinux/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# trace.bpf.c without the session kfunc, for kernels that lack it: the same
# programs, maps and data, opened with trace.skel.h (user/trace/trace.c).
# The two skeletons' layouts must match: checked here, ELF bytes aside.
$(OUT)/trace_nosession.bpf.o: bpf/trace.bpf.c bpf/*.h include/*.h vmlinux/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DCABBPF_NO_SESSION -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUT)/trace_nosession.skel.h: $(OUT)/trace_nosession.bpf.o $(OUT)/trace.skel.h
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name trace_nosession_bpf > $@.tmp
	$(Q)sed -n '/^struct trace_nosession_bpf {/,/^};/p' $@.tmp | sed 's/trace_nosession_bpf/trace_bpf/g' > $@.a
	$(Q)sed -n '/^struct trace_bpf {/,/^};/p' $(OUT)/trace.skel.h > $@.b
	$(Q)cmp -s $@.a $@.b || { echo "trace_nosession.bpf.o's layout differs from trace.bpf.o's:"; diff $@.b $@.a; rm -f $@.a $@.b $@.tmp; exit 1; }
	$(Q)rm -f $@.a $@.b && mv $@.tmp $@

$(PROTO_C) $(PROTO_H) &: $(PPROF_PROTO)
	$(call msg,PROTOC-C,$(PROTO_C))
	$(Q)mkdir -p $(OUT)/proto
	$(Q)protoc-c --proto_path=$(dir $(PPROF_PROTO)) --c_out=$(OUT)/proto $(PPROF_PROTO)

# Generated code: the project's warnings are not its author's.
$(PROTO_OBJ): $(PROTO_C) $(PROTO_H)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(OPT) -g $(SANFLAGS) $(EXTRA_CFLAGS) -I$(OUT)/proto -c $< -o $@

$(OUT)/obj/%.o: %.c $(SKELS) $(PROTO_H) $(HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

cabbpf: $(OUT)/obj/user/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(HARNESS_OBJ): tests/harness.c tests/harness.h $(HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(OUT)/tests/%: tests/%.c $(HARNESS_OBJ) $(LIB) tests/*.h | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CHECK_CFLAGS) $< $(HARNESS_OBJ) $(LIB) $(LDFLAGS) $(LDLIBS) \
		$(CHECK_LIBS) -o $@

$(OUT)/fuzz/%: tests/fuzz/%.c $(LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(LIB) $(LDFLAGS) $(LDLIBS) -o $@

# The fuzz harnesses under ASan + UBSan (scripts/fuzz.sh runs them on real
# recordings: FUZZ_SECONDS each).
fuzz:
	$(Q)$(MAKE) --no-print-directory OUT=.output/asan OPT=-O1 \
		SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		fuzz-bins
	$(Q)./scripts/fuzz.sh

fuzz-bins: $(FUZZ_BINS)

$(OUT)/bench/%: bench/%.c $(LIB) | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIB) $(LDFLAGS) $(LDLIBS) -lck -o $@

# Every suite, unit and integration; tests/run.sh prints the totals line.
# The floors' include order first (scripts/layers.sh, docs/architecture.md),
# and the names (scripts/names.sh: each exported function prefixed by its
# file's name, no basename twice).
check: layers names cabbpf $(TEST_BINS)
	$(Q)OUT=$(OUT) tests/run.sh $(TEST_BINS)

layers:
	$(Q)scripts/layers.sh

names: $(LIB) cabbpf
	$(Q)scripts/names.sh $(OUT)

unit-check: $(TEST_BINS)
	$(Q)OUT=$(OUT) CABBPF_UNIT_ONLY=1 tests/run.sh $(TEST_BINS)

asan-check:
	$(Q)$(MAKE) --no-print-directory OUT=.output/asan OPT=-O1 \
		SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		unit-check sanitized-integration

# Integration suites run against the sanitizer build of cabbpf (as root,
# like make check): the loader, the pipeline, the analyzers and the report
# on the real kernel's events. A few, for time: recordings and replay (the
# pipeline offline and live), and values of calls (their pieces kept on
# the frames).
SANITIZED_SUITES := $(OUT)/tests/test_vals_integration $(OUT)/tests/test_record_integration
sanitized-integration: $(OUT)/cabbpf $(SANITIZED_SUITES)
	$(Q)OUT=$(OUT) CABBPF_BIN=$(OUT)/cabbpf tests/run.sh $(SANITIZED_SUITES)

tsan-check:
	$(Q)$(MAKE) --no-print-directory OUT=.output/tsan OPT=-O1 \
		SANFLAGS="-fsanitize=thread" EXTRA_CFLAGS=-DCABBPF_TSAN tsan-run

# The sanitizer flavours also build the whole tool, so the loader's real
# threads (with real BPF events) run under the sanitizer too.
$(OUT)/cabbpf: $(OUT)/obj/user/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

tsan-run: $(OUT)/tests/test_cab_stress $(OUT)/tests/test_loader_threads $(OUT)/cabbpf
	$(Q)OUT=$(OUT) CABBPF_BIN=$(OUT)/cabbpf TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
		tests/run.sh $(OUT)/tests/test_cab_stress $(OUT)/tests/test_loader_threads

bench: cabbpf $(BENCH_BINS)

# Every suite, STRESS_RUNS times (default 50), under two CPU hogs: flake hunt.
stress:
	$(Q)./scripts/stress.sh

deps:
	$(Q)./scripts/install-deps.sh

# The test targets (the harness builds them on first use; up-to-date ones
# are kept).
targets:
	$(Q)tests/targets/build.sh .output/targets

demo: cabbpf
	$(Q)./scripts/demo.sh

format:
	$(Q)clang-format -i $(shell find $(LIB_DIRS) include bpf tests -name '*.[ch]')

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf .output cabbpf

# The kernel matrix (tests/vm/vmtest.sh): every guest runs what the host
# built here, and builds nothing. VMTEST_BINS: the suites of the case list
# (tests/vm/cases, or VMTEST_CASES) that this tree has; a listed suite it
# has not fails its cases there. Expanded only when vmtest is made
# (secondary expansion, last in this file).
VMTEST_BINS = $(filter $(TEST_BINS),$(addprefix $(OUT)/tests/,$(shell tests/vm/vmtest.sh --suites 2>/dev/null)))
.SECONDEXPANSION:
vmtest: cabbpf $$(VMTEST_BINS) targets
	$(Q)OUT=$(OUT) tests/vm/vmtest.sh
