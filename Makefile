# xdpperf build. `make` builds the tool; `make check` runs every test;
# `make demo` brings up the netns lab and runs a test through the router.
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
BUILD    := build

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
            -Iuser -I. -I$(BUILD)
# libcrypto (OpenSSL) for --auth-key's HMAC; pkg-config finds it where Debian puts it.
CRYPTO_CFLAGS := $(shell pkg-config --cflags libcrypto 2>/dev/null)
CRYPTO_LIBS   := $(shell pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)
CFLAGS   += $(CRYPTO_CFLAGS)
LDLIBS   := -lxdp -lbpf -lelf -lz -ljson-c -lmnl $(CRYPTO_LIBS) -lpthread -lm

ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -target bpf -O2 -g -Wall -D__TARGET_ARCH_$(ARCH) -I.

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
BPFT_SRCS := $(wildcard tests/bpf/test_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/bpf_%,$(BPFT_SRCS))

# Keep the skeletons: tests and tools include them too.
.SECONDARY: $(BPF_OBJS) $(SKELS)

.PHONY: all deps check demo test-unit test-bpf test-e2e bench clean vmlinux lab-down
all: xdpperf $(UNIT_BINS) $(BPFT_BINS)

deps:
	@bash scripts/deps.sh

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS) bpf/server.h $(SKELS) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libxdpperf.a: $(USER_OBJS)
	$(AR) rcs $@ $^

xdpperf: $(BUILD)/user/main.o $(BUILD)/libxdpperf.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libxdpperf.a $(USER_HDRS) $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libxdpperf.a $(LDLIBS) -lcmocka

$(BUILD)/tests/bpf_%: tests/bpf/%.c $(BUILD)/libxdpperf.a $(SKELS) $(USER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libxdpperf.a $(LDLIBS) -lcmocka

$(BUILD):
	@mkdir -p $(BUILD)/user $(BUILD)/bpf $(BUILD)/tests

# Regenerate the committed vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

test-unit: $(UNIT_BINS) $(BPFT_BINS) xdpperf
test-e2e: xdpperf

# `make check`: install what is missing, build, run every test.
check: deps
	@$(MAKE) --no-print-directory all
	@bash tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@bash scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@bash scripts/bench.sh

lab-down:
	@bash scripts/lab.sh down

clean:
	rm -rf $(BUILD) xdpperf
