# edgert trace's BPF tracer (tools/edgert/bpf/, docs/tracing.md). Included by
# the top-level Makefile.
#
# The BPF program (trace.bpf.c) is compiled by clang -target bpf against a
# vmlinux.h that bpftool dumps from a kernel's BTF (VMLINUX_BTF, default the
# running kernel's /sys/kernel/btf/vmlinux); being CO-RE, it loads on any
# kernel with BTF (the test VM boots Debian's 6.12). bpftool gen skeleton
# embeds it in tracer.c, which links libbpf (and libelf, zlib).
#
# Where any of clang, bpftool, libbpf's headers or the BTF is missing, the
# build goes on without the tracer: tools/edgert/bpf/tracer-absent.c takes its
# place and `edgert trace` says it is not in this build. BPF=0 forces that.

BPF_CLANG   ?= clang
BPFTOOL     ?= $(firstword $(wildcard /usr/sbin/bpftool /usr/bin/bpftool /usr/local/sbin/bpftool))
VMLINUX_BTF ?= $(wildcard /sys/kernel/btf/vmlinux)
BPF_ARCH    := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(shell uname -m)))

ifeq ($(BPF),0)
HAVE_BPF :=
else
HAVE_BPF := $(if $(and $(BPFTOOL),$(VMLINUX_BTF),$(wildcard /usr/include/bpf/libbpf.h),\
	$(shell command -v $(BPF_CLANG) 2>/dev/null)),yes)
endif

ifeq ($(HAVE_BPF),yes)
TRACER_OBJS := $(BUILD)/obj/tools/edgert/bpf/tracer.o
TRACER_LIBS := $(shell pkg-config --libs --static libbpf 2>/dev/null || echo -lbpf -lelf -lz)

$(BUILD)/bpf/vmlinux.h: $(VMLINUX_BTF)
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file $< format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/trace.bpf.o: tools/edgert/bpf/trace.bpf.c tools/edgert/bpf/trace-event.h \
		$(BUILD)/bpf/vmlinux.h
	$(BPF_CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(BPF_ARCH) \
		-I$(BUILD)/bpf -Itools/edgert/bpf -c $< -o $@

$(BUILD)/bpf/trace.skel.h: $(BUILD)/bpf/trace.bpf.o
	$(BPFTOOL) gen skeleton $< name trace_bpf > $@.tmp && mv $@.tmp $@

# The skeleton is generated code: not held to -Wmissing-prototypes and co.
$(BUILD)/obj/tools/edgert/bpf/tracer.o: tools/edgert/bpf/tracer.c $(BUILD)/bpf/trace.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(BUILD)/bpf -Itools/edgert/bpf $(ALL_CFLAGS) -Wno-missing-prototypes \
		-MMD -MP -c $< -o $@
else
TRACER_OBJS := $(BUILD)/obj/tools/edgert/bpf/tracer-absent.o
TRACER_LIBS :=

$(BUILD)/obj/tools/edgert/bpf/tracer-absent.o: tools/edgert/bpf/tracer-absent.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itools/edgert/bpf $(ALL_CFLAGS) -MMD -MP -c $< -o $@
endif

$(BUILD)/edgert $(BUILD)/edgert-static: $(TRACER_OBJS)

-include $(TRACER_OBJS:.o=.d)
