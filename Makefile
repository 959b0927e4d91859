# edgert — userspace build, install, demo and check.
#
#   make                  build libedgert (.a/.so), the edgert CLI, tests
#   make demo             install deps, build, run the main job on the CPU backend
#   make check            install deps, build, run every test suite
#   make unit-tests       build the unit test programs alone (build/tests/)
#   make bench            build, run 'edgert bench --suite' (FMA peak, memory
#                         bandwidth, zoo models against them; BENCH_ARGS=options)
#   make bench-progs      build the kernel benchmarks of bench/ (build/bench/)
#   make install PREFIX=  install library, header, CLI and edgert.pc
#   make SAN=1 ...        build with ASan+UBSan into build-san/
#   make POOL_STATS=1 ... build with the thread pool's counters into
#                         build-poolstats/ (scripts/pool-stats.sh reads them)
#   make modules          kernel module (see mk/kernel.mk and Kbuild)
#
# Sources are picked up by wildcard: a new file in libruntime/, backends/cpu/,
# backends/npu/, backends/opencl/ (and its ops/ and kernels/),
# backends/vulkan/ (and its ops/ and shaders/) or backends/gpu-common/ (what
# the GPU backends share) is part of the library without touching this file.

CC       ?= cc
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
BINDIR   ?= $(PREFIX)/bin
VERSION  := 0.1.0

ifeq ($(POOL_STATS),1)
BUILD    ?= build-poolstats
CPPFLAGS += -DERT_POOL_STATS
endif
ifeq ($(SAN),1)
BUILD    ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT      ?= -O1
else
BUILD    ?= build
SANFLAGS :=
OPT      ?= -O2
endif

ONNX_PROTO ?= /usr/include/onnx/onnx.proto
CONFORMANCE ?= $(abspath ../shared/conformance/onnx-backend)

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter
# libdrm: the NPU backend's device layer (backends/npu/npu-device.c)
DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)
DRM_LIBS   := $(shell pkg-config --libs libdrm 2>/dev/null || echo -ldrm)
# OpenCL: the ICD loader (libOpenCL.so.1) and the Khronos headers, for
# backends/opencl. The backend asks the loader for platforms at run time: a
# system with no OpenCL driver still runs everything else.
CL_CFLAGS  := $(shell pkg-config --cflags OpenCL 2>/dev/null)
CL_LIBS    := $(shell pkg-config --libs OpenCL 2>/dev/null || echo -lOpenCL)
# Vulkan: the loader (libvulkan.so.1) and its headers, for backends/vulkan.
# Shaders are compiled by glslc when building (scripts/embed-spv.sh); the
# backend asks the loader for devices at run time.
VK_CFLAGS  := $(shell pkg-config --cflags vulkan 2>/dev/null)
VK_LIBS    := $(shell pkg-config --libs vulkan 2>/dev/null || echo -lvulkan)
# libjpeg(-turbo) and libpng: ImageDecoder's JPEG and PNG (backends/cpu/ops/image.c)
IMG_CFLAGS := $(shell pkg-config --cflags libpng 2>/dev/null)
IMG_LIBS   := -ljpeg $(shell pkg-config --libs libpng 2>/dev/null || echo -lpng)
CPPFLAGS += -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. -I$(BUILD)/gen $(DRM_CFLAGS) \
	    $(CL_CFLAGS) $(VK_CFLAGS) $(IMG_CFLAGS)
CFLAGS   ?= $(OPT) -g
ALL_CFLAGS := -std=c11 $(WARN) -fPIC -fvisibility=hidden -pthread $(SANFLAGS) $(CFLAGS)
LDLIBS   += -lprotobuf-c $(IMG_LIBS) -lz -lm -lpthread $(DRM_LIBS) $(CL_LIBS) $(VK_LIBS)
ALL_LDFLAGS := -pthread $(SANFLAGS) $(LDFLAGS)

LIB_SRCS  := $(sort $(wildcard libruntime/*.c libruntime/*/*.c backends/cpu/*.c backends/cpu/*/*.c \
		backends/npu/*.c backends/opencl/*.c backends/opencl/ops/*.c backends/gpu-common/*.c \
		backends/vulkan/*.c backends/vulkan/ops/*.c))
# The enpu command stream validator/executor, shared with the kernel module
# (GPL-2.0-only, freestanding): the simulator in backends/npu runs it. It
# stays one object of its own, built from kmod/ unchanged.
ENPU_CS_SRC := kmod/enpu_cs.c
LIB_SRCS  += $(ENPU_CS_SRC)
GEN_SRCS  := $(BUILD)/gen/onnx.pb-c.c
TOOL_SRCS := $(sort $(wildcard tools/edgert/*.c))
TEST_SRCS := $(sort $(wildcard tests/unit/test-*.c))
TEST_COMMON := $(sort $(wildcard tests/unit/common-*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIB_OBJS  := $(call obj,$(LIB_SRCS)) $(BUILD)/obj/gen/onnx.pb-c.o $(BUILD)/obj/gen/ocl-kernels.o \
	     $(BUILD)/obj/gen/vk-shaders.o
TOOL_OBJS := $(call obj,$(TOOL_SRCS))
TEST_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TEST_COMMON_OBJS := $(call obj,$(TEST_COMMON))
# Header dependencies: every object writes its .d next to it (-MMD -MP); a
# program compiled and linked in one command (the tests) writes
# $(BUILD)/obj/link/<program>.d, all of them included at the end.
link_dep = $(patsubst $(BUILD)/%,$(BUILD)/obj/link/%.d,$(1))
LINK_DEPFLAGS = -MMD -MP -MT $@ -MF $(call link_dep,$@)
BACKEND_OPS_SRCS := $(addprefix tests/backend-ops/,test-backend-ops.c test-ocl-cache.c test-vk-cache.c \
		    test-vk-import.c)
BACKEND_OPS_BINS := $(patsubst tests/backend-ops/%.c,$(BUILD)/%,$(BACKEND_OPS_SRCS))
# The kernel benchmarks (bench/*.c): programs a person runs, built with the
# library's warnings by 'make' so that a change to the internal headers they
# include cannot leave them broken unseen.
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(sort $(wildcard bench/*.c)))

.PHONY: all lib tools tests unit-tests bench-progs deps demo check install clean modules FORCE
all: lib tools tests bench-progs $(BUILD)/edgert.pc

lib: $(BUILD)/libedgert.a $(BUILD)/libedgert.so
tools: $(BUILD)/edgert
tests: $(TEST_BINS) $(BACKEND_OPS_BINS)
# The unit test programs alone (what tests/suites/10-unit.sh and 11-unit-asan.sh run).
unit-tests: $(TEST_BINS)
bench-progs: $(BENCH_BINS)

deps:
	@./scripts/install-deps.sh

$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(BUILD)/gen $(ONNX_PROTO)

# Generated protobuf-c code is not ours: build it without our extra warnings.
$(BUILD)/obj/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -fPIC -fvisibility=hidden $(SANFLAGS) -I$(BUILD)/gen -c $< -o $@

# The OpenCL kernels, embedded as C strings (no file is read at run time);
# each program is built for the session's device when first used.
# The codes headers, put in front of every program: the op codes both GPU
# backends share, then OpenCL's own.
OCL_CODES   := backends/gpu-common/gpu-codes.h backends/opencl/kernels/ocl-codes.h
OCL_KERNELS := $(sort $(wildcard backends/opencl/kernels/*.cl))
%/gen/ocl-kernels.c: $(OCL_KERNELS) $(OCL_CODES) scripts/embed-cl.sh
	@mkdir -p $(dir $@)
	sh scripts/embed-cl.sh $@ $(OCL_CODES) $(OCL_KERNELS)

$(BUILD)/obj/gen/ocl-kernels.o: $(BUILD)/gen/ocl-kernels.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The Vulkan shaders, compiled to SPIR-V by glslc and embedded as C arrays
# (no shader compiler at run time); common.glsl, the other .glsl files,
# vk-codes.h and gpu-common/gpu-codes.h are #included by every shader.
VK_SHADERS    := $(sort $(wildcard backends/vulkan/shaders/*.comp))
# each again with -DERT_F16 (float16 storage, precision LOW) but the conversion, which has both
VK_SHADERS_F16 := $(filter-out %/convert.comp,$(VK_SHADERS))
# the elementwise ops again in half arithmetic (LOW where the device has shaderFloat16)
VK_SHADERS_F16A := $(addprefix backends/vulkan/shaders/,eltwise.comp binary.comp binary_same.comp)
# the row reductions again with subgroup operations (reduce.glsl), in both storages
VK_SHADERS_SG := $(addprefix backends/vulkan/shaders/,softmax.comp layernorm.comp plane_reduce.comp)
VK_SHADER_INC := $(wildcard backends/vulkan/shaders/*.glsl backends/vulkan/shaders/*.h) \
		 backends/gpu-common/gpu-codes.h
# (the Makefile too: it lists the variants)
%/gen/vk-shaders.c: $(VK_SHADERS) $(VK_SHADER_INC) scripts/embed-spv.sh Makefile
	@mkdir -p $(dir $@)
	sh scripts/embed-spv.sh $@ $(VK_SHADERS) --variant f16 ERT_F16 $(VK_SHADERS_F16) \
		--variant f16a ERT_F16,ERT_F16_ARITH $(VK_SHADERS_F16A) \
		--variant sg ERT_SUBGROUP $(VK_SHADERS_SG) --variant f16.sg ERT_F16,ERT_SUBGROUP $(VK_SHADERS_SG)

$(BUILD)/obj/gen/vk-shaders.o: $(BUILD)/gen/vk-shaders.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# There is no static libOpenCL nor libvulkan: a static binary (mk/kernel.mk's
# edgert-static for the test VM) links this library instead, whose OpenCL
# and Vulkan factories (backends/opencl/absent/, backends/vulkan/absent/)
# answer that the backend is not in the build.
OCL_OBJS := $(filter $(BUILD)/obj/backends/opencl/% $(BUILD)/obj/backends/vulkan/%,$(LIB_OBJS)) \
	    $(BUILD)/obj/gen/ocl-kernels.o $(BUILD)/obj/gen/vk-shaders.o
$(BUILD)/libedgert-nocl.a: $(filter-out $(OCL_OBJS),$(LIB_OBJS)) \
		$(BUILD)/obj/backends/opencl/absent/ocl-absent.o \
		$(BUILD)/obj/backends/vulkan/absent/vk-absent.o
	@rm -f $@
	$(AR) rcs $@ $^

# CPU kernels get -O3 (loop vectorisation); IEEE semantics stay (no -ffast-math).
$(BUILD)/obj/backends/cpu/%.o: KERNEL_CFLAGS := $(if $(SAN),,-O3)
$(BUILD)/obj/kmod/enpu_cs.o: KERNEL_CFLAGS := -ffreestanding

# Kernels of one CPU level live in files named *-<level>.c and are built for
# that level alone; nothing calls them before backends/cpu/isa.c has found the
# level on the CPU, so the library still runs on any x86-64.
ISA_FLAGS_avx2       := -mavx2 -mfma -mf16c
ISA_FLAGS_avx512     := $(ISA_FLAGS_avx2) -mavx512f -mavx512bw -mavx512vl -mavx512dq
ISA_FLAGS_avx512vnni := $(ISA_FLAGS_avx512) -mavx512vnni
ISA_FLAGS_amx        := $(ISA_FLAGS_avx512vnni) -mamx-tile -mamx-int8 -mamx-bf16
# Not a level: AVX512_BF16 comes with some CPUs of the avx512 levels and up
# (precision LOW's bf16 kernels, used only where cpuid reports it).
ISA_FLAGS_avx512bf16 := $(ISA_FLAGS_avx512) -mavx512bf16
isa_flags = $(foreach l,avx2 avx512 avx512vnni amx avx512bf16,\
	$(if $(filter %-$(l),$(basename $(notdir $(1)))),$(ISA_FLAGS_$(l))))

$(BUILD)/obj/%.o: %.c | $(BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(KERNEL_CFLAGS) $(call isa_flags,$<) -MMD -MP -c $< -o $@

$(BUILD)/libedgert.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libedgert.so: $(LIB_OBJS) libruntime/edgert.map
	$(CC) -shared -Wl,-soname,libedgert.so.0 -Wl,--version-script=libruntime/edgert.map \
		$(ALL_LDFLAGS) -o $@ $(LIB_OBJS) $(LDLIBS)
	@ln -sf libedgert.so $(BUILD)/libedgert.so.0

$(BUILD)/edgert: $(TOOL_OBJS) $(BUILD)/libedgert.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(TOOL_OBJS) $(TRACER_OBJS) $(BUILD)/libedgert.a $(LDLIBS) \
		$(TRACER_LIBS)

# The CLI's code without main(), for unit tests of tool code (edgert quantize).
$(BUILD)/libedgert-cli.a: $(filter-out $(BUILD)/obj/tools/edgert/main.o,$(TOOL_OBJS))
	@rm -f $@
	$(AR) rcs $@ $^

# Test programs link with lld where it is installed: about half the CPU time of
# ld.bfd for these (each pulls most of libedgert.a), the same program.
TEST_LD ?= $(if $(shell command -v ld.lld 2>/dev/null),-fuse-ld=lld)
TEST_LD := $(TEST_LD)

$(BUILD)/tests/%: tests/unit/%.c $(TEST_COMMON_OBJS) $(BUILD)/libedgert-cli.a $(BUILD)/libedgert.a
	@mkdir -p $(dir $@) $(dir $(call link_dep,$@))
	$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) $(LINK_DEPFLAGS) -o $@ $< $(TEST_COMMON_OBJS) \
		$(BUILD)/libedgert-cli.a $(BUILD)/libedgert.a $(TEST_LD) $(ALL_LDFLAGS) $(LDLIBS)

# The cross-backend op test (tests/suites/37-opencl.sh runs it; not a unit
# test: it needs an OpenCL platform, and the unit suites run under ASan).
$(BACKEND_OPS_BINS): $(BUILD)/%: tests/backend-ops/%.c $(BUILD)/libedgert.a
	@mkdir -p $(dir $@) $(dir $(call link_dep,$@))
	$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) $(LINK_DEPFLAGS) -o $@ $< $(BUILD)/libedgert.a $(ALL_LDFLAGS) \
		$(LDLIBS)

$(BENCH_BINS): $(BUILD)/bench/%: bench/%.c $(BUILD)/libedgert.a
	@mkdir -p $(dir $@) $(dir $(call link_dep,$@))
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LINK_DEPFLAGS) -o $@ $< $(BUILD)/libedgert.a $(TEST_LD) \
		$(ALL_LDFLAGS) $(LDLIBS)

# The CPU == NPU int8 check also links the enpu command stream executor.
$(BUILD)/tests/test-ops-qfixed-npu: tests/unit/test-ops-qfixed-npu.c $(BUILD)/obj/kmod/enpu_cs.o \
		$(TEST_COMMON_OBJS) $(BUILD)/libedgert.a
	@mkdir -p $(dir $@) $(dir $(call link_dep,$@))
	$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) $(LINK_DEPFLAGS) -o $@ $< $(BUILD)/obj/kmod/enpu_cs.o \
		$(TEST_COMMON_OBJS) $(BUILD)/libedgert.a $(TEST_LD) $(ALL_LDFLAGS) $(LDLIBS)

# The install directories baked into edgert.pc: rewritten (and edgert.pc
# regenerated) whenever PREFIX, LIBDIR or INCDIR differ from the last build.
PC_DIRS := $(PREFIX)|$(LIBDIR)|$(INCDIR)|$(VERSION)
$(BUILD)/pc-dirs: FORCE
	@mkdir -p $(BUILD)
	@[ "$$(cat $@ 2>/dev/null)" = '$(PC_DIRS)' ] || echo '$(PC_DIRS)' > $@

$(BUILD)/edgert.pc: libruntime/edgert.pc.in Makefile $(BUILD)/pc-dirs
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR)
	install -m 644 $(BUILD)/libedgert.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libedgert.so $(DESTDIR)$(LIBDIR)/libedgert.so.$(VERSION)
	ln -sf libedgert.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libedgert.so.0
	ln -sf libedgert.so.0 $(DESTDIR)$(LIBDIR)/libedgert.so
	install -m 644 libruntime/include/edgert.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(BUILD)/edgert.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 755 $(BUILD)/edgert $(DESTDIR)$(BINDIR)/

# 'deps' first, then a fresh make: the build needs protoc-c and the schema.
demo: deps
	@$(MAKE) --no-print-directory all
	@ERT_BUILD=$(BUILD) ./scripts/demo.sh

check: deps
	@$(MAKE) --no-print-directory all
	@ERT_BUILD=$(BUILD) ERT_CONFORMANCE=$(CONFORMANCE) CC=$(CC) ./scripts/check.sh

# A program a person runs, not a test: docs/performance.md says how to read it.
# bench/ is a directory of the tree, so the target must be phony.
.PHONY: bench
bench: tools
	$(BUILD)/edgert bench --suite $(BENCH_ARGS)

clean:
	rm -rf build build-san build-fuzz build-clang build-noprobes

# Parts of the tree with a build of their own (kernel module, selftests, fuzzers)
# hook in here.
-include $(sort $(wildcard mk/*.mk))
-include $(LIB_OBJS:.o=.d) $(TOOL_OBJS:.o=.d) $(TEST_COMMON_OBJS:.o=.d) $(BUILD)/obj/kmod/enpu_cs.d \
	 $(BUILD)/obj/backends/opencl/absent/ocl-absent.d $(BUILD)/obj/backends/vulkan/absent/vk-absent.d \
	 $(call link_dep,$(TEST_BINS) $(BACKEND_OPS_BINS) $(BENCH_BINS))

FORCE:
