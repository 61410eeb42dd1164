# xdpperf build. `make` builds the tool; `make check` runs every test;
# `make demo` brings up the netns lab and runs a test through the router.
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
BUILD    := build

PKG_CONFIG ?= pkg-config

# The libraries' own compiler and linker flags, as their pkg-config files give them.
# libcrypto (OpenSSL): --auth-key's HMAC.
# libmicrohttpd: the --metrics endpoint (report/metrics_http.c).
PKGS     := libbpf libxdp json-c libmnl libcap libcrypto libmicrohttpd
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS))

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
            -Iuser -I. -I$(BUILD) $(PKG_CFLAGS)
LDLIBS   := $(PKG_LIBS) -lpthread -lm

# The version --version shows: git's name for this tree, or, outside a git
# tree (a release tarball, a .deb build from one), the VERSION file's.
# A package build may set XP_VERSION itself.
# (Only this tree's own .git: a tarball unpacked inside another repository is not that repository.)
XP_VERSION ?= $(or $(if $(wildcard $(CURDIR)/.git),$(shell git -C $(CURDIR) describe --always --dirty 2>/dev/null)),$(shell cat $(CURDIR)/VERSION))

ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -target bpf -O2 -g -Wall -D__TARGET_ARCH_$(ARCH) -I.
# The client program compare-and-swaps the window's slots (bpf/window.h), and
# both it and the SYN sender the free ring's positions (bpf/window_ring.h):
# BPF atomics of ISA v3.
$(BUILD)/bpf/xdp_connect.bpf.o: BPF_CFLAGS += -mcpu=v3
$(BUILD)/bpf/live.bpf.o: BPF_CFLAGS += -mcpu=v3

# bpf/X.bpf.c -> build/bpf/X.bpf.o -> build/bpf/X.skel.h (included as "bpf/X.skel.h").
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.skel.h,$(BPF_SRCS))
BPF_HDRS  := $(wildcard bpf/*.h bpf/lib/*.h) vmlinux.h

# user/ is one folder per part (cli, client, server, engine, ...); includes name the folder.
USER_SRCS := $(filter-out user/main.c,$(wildcard user/*/*.c))
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
USER_HDRS := $(wildcard user/*/*.h)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
# cmocka tests that need root: namespaces, veths, AF_XDP.
ROOT_SRCS := $(wildcard tests/root/test_*.c)
ROOT_BINS := $(patsubst tests/root/%.c,$(BUILD)/tests/root_%,$(ROOT_SRCS))
BPFT_SRCS := $(wildcard tests/bpf/test_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/bpf_%,$(BPFT_SRCS))
# The C tests' runner of tests/lib/netns.sh (namespaces and veths), for tests that make them.
NETNS_HELPER := $(BUILD)/tests/lib/netns_helper.o
# tests/lib/*.c: what the BPF and root tests share (netns_helper.c and the
# others), linked before libxdpperf.a so that what they use of it is pulled in.
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TESTLIB_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(TESTLIB_SRCS))
# Programs the e2e tests and the benchmarks run (nltest, xdpconn, connloop).
# flow_args.c is no tool: what flowlab and flowlive share, linked into both.
TOOL_LIBSRC := tests/tools/flow_args.c
# tests/tools/X.bpf.c: BPF objects the bench attaches (build/tests/tools/X.bpf.o).
TOOL_BPF_SRCS := $(wildcard tests/tools/*.bpf.c)
TOOL_BPF_OBJS := $(patsubst tests/tools/%.bpf.c,$(BUILD)/tests/tools/%.bpf.o,$(TOOL_BPF_SRCS))
TOOL_SRCS := $(filter-out $(TOOL_LIBSRC) $(TOOL_BPF_SRCS),$(wildcard tests/tools/*.c))
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRCS)) $(TOOL_BPF_OBJS)

# Sanitizer builds, for `make check` and `make fuzz` (not `make`, which stays
# one build): the library again, compiled by clang with instrumentation, in
# trees of their own so the normal build is untouched.
#   build/asan/  -fsanitize=address,undefined: the unit tests, build/asan/tests/test_*
#   build/fuzz/  the same plus libFuzzer's coverage: the harnesses of
#                tests/fuzz/fuzz_*.c, build/fuzz/fuzz_* (clang's libclang-rt)
SAN_CC     ?= clang
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter \
              -Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE -Iuser -I. -I$(BUILD) $(PKG_CFLAGS)
# UBSan findings are fatal: a test or fuzzer that hits one fails.
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
ASAN_OBJS  := $(patsubst user/%.c,$(BUILD)/asan/user/%.o,$(USER_SRCS))
FUZZ_OBJS  := $(patsubst user/%.c,$(BUILD)/fuzz/user/%.o,$(USER_SRCS))
ASAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/asan/tests/%,$(UNIT_SRCS))
# Root tests that also run under ASan and UBSan: the AF_XDP engine's frames
# of every size from 64 to 9018 (its UMEM slots, jumbo frames' chunks).
ASAN_ROOT_BINS := $(BUILD)/asan/tests/root_test_xsk_stream
# The tool itself under ASan and UBSan: tests/e2e/95_hostile_asan.sh runs the
# hostile-client cases against it as the server.
ASAN_XDPPERF := $(BUILD)/asan/xdpperf
# fuzz_server_ctrl.c drives the server's own event loop (it includes
# user/server/server.c) with sequences of control lines over loopback
# connections in a network namespace of its own, against link-time stubs of
# the XDP loader and the listeners (the harness's comment says what and why).
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))

# Keep the skeletons: tests and tools include them too.
.SECONDARY: $(BPF_OBJS) $(SKELS)

.PHONY: all deps check demo test-unit test-bpf test-e2e bench rfc2544 clean vmlinux lab-down FORCE install uninstall deb \
	sanitize fuzz mutate coverage-server
all: xdpperf $(UNIT_BINS) $(ROOT_BINS) $(BPFT_BINS) $(TOOL_BINS)

deps:
	@bash scripts/deps.sh

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The device-bound variant is server.bpf.c built with XP_SERVER_HWTS.
$(BUILD)/bpf/server_hwts.bpf.o: bpf/server.bpf.c

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) bpf/server.h $(SKELS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# build/xp_version.h: rewritten only when a version changed, so only
# util/version.c is rebuilt then.
$(BUILD)/xp_version.h: FORCE | $(BUILD)
	@printf '#define XP_VERSION "%s"\n#define XP_LIBBPF_BUILT "%s"\n#define XP_LIBXDP_BUILT "%s"\n' \
		'$(XP_VERSION)' "$$($(PKG_CONFIG) --modversion libbpf)" "$$($(PKG_CONFIG) --modversion libxdp)" >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/user/util/version.o: $(BUILD)/xp_version.h

$(BUILD)/libxdpperf.a: $(USER_OBJS)
	$(AR) rcs $@ $^

xdpperf: $(BUILD)/user/main.o $(BUILD)/libxdpperf.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libxdpperf.a $(USER_HDRS) $(BPF_HDRS) $(wildcard tests/unit/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libxdpperf.a $(LDLIBS) -lcmocka

$(BUILD)/tests/root_%: tests/root/%.c $(BUILD)/libxdpperf.a $(TESTLIB_OBJS) $(USER_HDRS) $(BPF_HDRS) $(SKELS) $(wildcard tests/root/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TESTLIB_OBJS) $(BUILD)/libxdpperf.a $(LDLIBS) -lcmocka

$(BUILD)/tests/bpf_%: tests/bpf/%.c $(BUILD)/libxdpperf.a $(TESTLIB_OBJS) $(SKELS) $(USER_HDRS) $(wildcard tests/bpf/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TESTLIB_OBJS) $(BUILD)/libxdpperf.a $(LDLIBS) -lcmocka

$(NETNS_HELPER): tests/lib/netns_helper.c tests/lib/netns_helper.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DXP_NETNS_SH='"$(CURDIR)/tests/lib/netns.sh"' -c $< -o $@

$(BUILD)/tests/lib/%.o: tests/lib/%.c $(wildcard tests/lib/*.h) $(USER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/tests/tools/%: tests/tools/%.c $(BUILD)/libxdpperf.a $(USER_HDRS) $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(filter %.o,$^) $(BUILD)/libxdpperf.a $(LDLIBS)

$(BUILD)/tests/tools/%.bpf.o: tests/tools/%.bpf.c vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests/tools/flow_args.o: tests/tools/flow_args.c tests/tools/flow_args.h $(USER_HDRS) $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/tests/tools/flowlab $(BUILD)/tests/tools/flowlive: $(BUILD)/tests/tools/flow_args.o tests/tools/flow_args.h

$(BUILD)/asan/user/%.o: user/%.c $(USER_HDRS) bpf/server.h $(SKELS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_CFLAGS) $(ASAN_FLAGS) -c $< -o $@
$(BUILD)/asan/user/util/version.o: $(BUILD)/xp_version.h

$(BUILD)/fuzz/user/%.o: user/%.c $(USER_HDRS) bpf/server.h $(SKELS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_CFLAGS) $(FUZZ_FLAGS) -c $< -o $@
$(BUILD)/fuzz/user/util/version.o: $(BUILD)/xp_version.h

$(BUILD)/asan/libxdpperf.a: $(ASAN_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/fuzz/libxdpperf.a: $(FUZZ_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/asan/tests/%: tests/unit/%.c $(BUILD)/asan/libxdpperf.a $(USER_HDRS) $(BPF_HDRS) $(wildcard tests/unit/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_CFLAGS) $(ASAN_FLAGS) -o $@ $< $(BUILD)/asan/libxdpperf.a $(LDLIBS) -lcmocka

$(BUILD)/asan/tests/root_%: tests/root/%.c $(BUILD)/asan/libxdpperf.a $(TESTLIB_OBJS) $(USER_HDRS) $(BPF_HDRS) $(SKELS) $(wildcard tests/root/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_CFLAGS) $(ASAN_FLAGS) -o $@ $< $(TESTLIB_OBJS) $(BUILD)/asan/libxdpperf.a $(LDLIBS) -lcmocka

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/fuzz/libxdpperf.a $(USER_HDRS)
	$(SAN_CC) $(SAN_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< \
		$(BUILD)/fuzz/libxdpperf.a $(LDLIBS)

$(ASAN_XDPPERF): $(BUILD)/asan/user/main.o $(BUILD)/asan/libxdpperf.a
	$(SAN_CC) $(SAN_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS)

sanitize: $(ASAN_UNIT_BINS) $(ASAN_ROOT_BINS) $(ASAN_XDPPERF) $(FUZZ_BINS)

# Coverage build (clang's source-based coverage), for `make coverage-server`
# only: build/cov/xdpperf (the hostile e2e's server) and build/cov/
# fuzz_server_ctrl (the control-path fuzzer without sanitizers, to replay its
# corpus); scripts/coverage-server.sh runs them and prints llvm-cov's line
# coverage of user/server/server.c, session.c, reverse.c, conn.c and children.c.
COV_FLAGS := -fprofile-instr-generate -fcoverage-mapping
COV_OBJS  := $(patsubst user/%.c,$(BUILD)/cov/user/%.o,$(USER_SRCS))

$(BUILD)/cov/user/%.o: user/%.c $(USER_HDRS) bpf/server.h $(SKELS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_CFLAGS) $(COV_FLAGS) -c $< -o $@
$(BUILD)/cov/user/util/version.o: $(BUILD)/xp_version.h

$(BUILD)/cov/libxdpperf.a: $(COV_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/cov/xdpperf: $(BUILD)/cov/user/main.o $(BUILD)/cov/libxdpperf.a
	$(SAN_CC) $(SAN_CFLAGS) $(COV_FLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/cov/fuzz_server_ctrl: tests/fuzz/fuzz_server_ctrl.c $(BUILD)/cov/libxdpperf.a $(USER_HDRS)
	$(SAN_CC) $(SAN_CFLAGS) $(COV_FLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/cov/libxdpperf.a $(LDLIBS)

# `make coverage-server` (not part of `make check`; root, the lab: it runs
# 80_hostile's quick cases): line coverage of the server's control path
# under the fuzzer's seeds and corpus and the hostile-client e2e test.
coverage-server: deps
	@$(MAKE) --no-print-directory xdpperf $(BUILD)/cov/xdpperf $(BUILD)/cov/fuzz_server_ctrl
	@bash scripts/coverage-server.sh

$(BUILD):
	@mkdir -p $(BUILD)/user $(BUILD)/bpf $(BUILD)/tests

# Regenerate the committed vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

test-unit: $(UNIT_BINS) $(ROOT_BINS) $(BPFT_BINS) xdpperf
test-e2e: xdpperf $(TOOL_BINS)

# `make check`: install what is missing, build, run every test: the unit
# tests also under ASan and UBSan, each fuzzer for XP_FUZZ_SECONDS (15 s: a smoke run; `make fuzz` is the long one).
check: deps
	@$(MAKE) --no-print-directory all sanitize
	@bash tests/run.sh

# `make fuzz`: only the fuzzers, longer: each libFuzzer harness for
# FUZZ_SECONDS (600 s), the BPF frame fuzzer for FUZZ_FRAMES frames per
# program (2000000) with a fresh seed. New inputs stay in build/fuzz/corpus/.
FUZZ_SECONDS ?= 600
FUZZ_FRAMES  ?= 2000000
fuzz: deps
	@$(MAKE) --no-print-directory all sanitize
	@XP_FUZZ_SECONDS=$(FUZZ_SECONDS) XP_FUZZ_FRAMES=$(FUZZ_FRAMES) XP_FUZZ_SEED=$${XP_FUZZ_SEED:-random} \
		XP_FUZZ_KEEP=1 XP_TEST_TIMEOUT=$$(($(FUZZ_SECONDS) + 600)) bash tests/run.sh fuzz

demo: deps
	@$(MAKE) --no-print-directory all
	@bash scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@bash scripts/bench.sh

# `make mutate`: each engine's count and each BPF counter broken by one in a
# test-only build of a copy of the committed tree; the tests must notice
# (scripts/mutate.sh, which says which mutations were caught).
mutate: deps
	@bash scripts/mutate.sh

# The full RFC 2544 suite against the lab (hours; the quick profile is tests/e2e/53_rfc2544.sh in make check).
rfc2544: deps
	@$(MAKE) --no-print-directory all
	@bash scripts/rfc2544.sh

lab-down:
	@bash scripts/lab.sh down

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the binary (its BPF objects are
# inside, through the skeletons), the man page, bash completion, and the lab
# as xdpperf-lab. The lab script keeps its place relative to the helpers it
# may source (tests/lib/) under DATADIR; xdpperf-lab finds it relative to
# itself, so a DESTDIR tree runs where it is.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
DATADIR     ?= $(PREFIX)/share/xdpperf
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
LAB_FILES   := scripts/lab.sh $(wildcard tests/lib/netns.sh)
INSTALL     ?= install

install: xdpperf
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 0755 xdpperf $(DESTDIR)$(BINDIR)/xdpperf
	$(INSTALL) -m 0644 man/xdpperf.1 $(DESTDIR)$(MANDIR)/man1/xdpperf.1
	$(INSTALL) -m 0644 completions/xdpperf $(DESTDIR)$(BASHCOMPDIR)/xdpperf
	for f in $(LAB_FILES); do \
		$(INSTALL) -d $(DESTDIR)$(DATADIR)/$$(dirname $$f) && \
		$(INSTALL) -m 0755 $$f $(DESTDIR)$(DATADIR)/$$f || exit 1; \
	done
	printf '%s\n' '#!/bin/sh' '# The xdpperf network-namespace lab: see xdpperf(1), THE LAB.' \
		'here=$$(dirname "$$(readlink -f "$$0")")' \
		'exec bash "$$here/$(shell realpath -m --relative-to=$(BINDIR) $(DATADIR))/scripts/lab.sh" "$$@"' \
		>$(DESTDIR)$(BINDIR)/xdpperf-lab
	chmod 0755 $(DESTDIR)$(BINDIR)/xdpperf-lab

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/xdpperf $(DESTDIR)$(BINDIR)/xdpperf-lab \
		$(DESTDIR)$(MANDIR)/man1/xdpperf.1 $(DESTDIR)$(BASHCOMPDIR)/xdpperf
	rm -rf $(DESTDIR)$(DATADIR)

# `make deb`: the Debian package, built in a copy of the tree outside it
# (dpkg-buildpackage writes next to the source); the .deb lands in build/.
deb:
	@bash scripts/build-deb.sh $(BUILD)

clean:
	rm -rf $(BUILD) xdpperf

# `make image`: the container image from Debian's packages (scripts/image.sh; docs/container.md).
# `make k8s-validate`: deploy/kubernetes/ against Kubernetes 1.27.1's schema (npm's kubernetes-models).
# Neither is part of `make check`: both fetch packages (tests/e2e/99_container.sh builds its own image).
.PHONY: image k8s-validate
image:
	@bash scripts/image.sh
k8s-validate:
	@bash tests/tools/k8s_validate.sh deploy/kubernetes/*.yaml
