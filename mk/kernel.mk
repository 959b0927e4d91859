# enpu kernel driver: kbuild, selftests, static checks, VM test.
# Included by the top-level Makefile; also usable as make -f mk/kernel.mk.
#
#   make modules [KDIR=...]          build kmod/enpu.ko (default: running kernel)
#   make modules_install [KDIR=...]  install it (or use dkms.conf)
#   make selftests                   build the kselftest programs and enpu_bench
#   make checkpatch                  scripts/checkpatch.pl --strict on kmod/ and uapi/
#   make sparse                      C=2 sparse build against KDIR
#   make kernel-vm-test              build, boot Debian 6.12 in QEMU, run the selftests
#   make enpu-cs-fuzz                libFuzzer + ASan on the shared command stream code

KDIR        ?= /lib/modules/$(shell uname -r)/build
DEBIAN_KDIR := $(lastword $(sort $(wildcard /usr/src/linux-headers-6.12*-amd64)))
KBUILD_OUT  ?= $(abspath $(or $(BUILD),build)/kernel)
LINUX_SRC_TARBALL ?= $(firstword $(wildcard /usr/src/linux-source-6.12.tar.xz))
KERNEL_SRCS := $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/*.h uapi/drm/*.h))
CHECKPATCH_DIR := $(KBUILD_OUT)/checkpatch
CHECKPATCH  ?= $(CHECKPATCH_DIR)/checkpatch.pl
# Every check of --strict, nothing ignored; --no-tree because kmod/ is checked
# outside a kernel tree (checkpatch.pl, its spelling and const-struct lists
# come from Debian's linux-source), -f because these are files, not patches.
CHECKPATCH_FLAGS := --strict --no-tree --terse --show-types --quiet -f

.PHONY: modules modules_install selftests checkpatch sparse kernel-vm-test kernel-clean enpu-cs-fuzz

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

modules_install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install

selftests:
	$(MAKE) -C selftests OUTPUT=$(KBUILD_OUT)/selftests

$(CHECKPATCH):
	@mkdir -p $(CHECKPATCH_DIR)
	@test -n "$(LINUX_SRC_TARBALL)" || { echo "need linux-source-6.12 or CHECKPATCH=" >&2; exit 1; }
	tar -xJf $(LINUX_SRC_TARBALL) -C $(CHECKPATCH_DIR) --strip-components=2 \
		linux-source-6.12/scripts/checkpatch.pl linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
	@touch $@

checkpatch: $(CHECKPATCH)
	@perl $(CHECKPATCH) $(CHECKPATCH_FLAGS) $(KERNEL_SRCS) >$(KBUILD_OUT)/checkpatch.out 2>&1; \
	if grep -E ': (ERROR|WARNING|CHECK):' $(KBUILD_OUT)/checkpatch.out; then exit 1; fi; \
	echo "checkpatch --strict: clean ($(words $(KERNEL_SRCS)) files)"

# sparse runs on a copy so that it never races with a build in the tree
sparse:
	@rm -rf $(KBUILD_OUT)/sparse && mkdir -p $(KBUILD_OUT)/sparse
	@cp -r Kbuild kmod uapi $(KBUILD_OUT)/sparse/
	@$(MAKE) -s -C $(or $(DEBIAN_KDIR),$(KDIR)) M=$(KBUILD_OUT)/sparse C=2 modules \
		>$(KBUILD_OUT)/sparse.out 2>&1 || { cat $(KBUILD_OUT)/sparse.out; exit 1; }
	@if grep -E 'warning:|error:' $(KBUILD_OUT)/sparse.out; then exit 1; fi; echo "sparse: clean"

kernel-vm-test:
	@ERT_BUILD=$(or $(BUILD),build) sh tests/suites/60-kernel-vm.sh

ENPU_FUZZ_CC ?= clang
ENPU_FUZZ_SECONDS ?= $(or $(FUZZ_SECONDS),20)
# Seeds are valid streams (selftests/enpu_cs_seed.c): random bytes would
# almost never get past the stream header.
enpu-cs-fuzz:
	@mkdir -p $(KBUILD_OUT)/fuzz/corpus $(KBUILD_OUT)/fuzz/seeds
	$(MAKE) -s -C selftests OUTPUT=$(KBUILD_OUT)/selftests $(KBUILD_OUT)/selftests/enpu_cs_seed
	$(KBUILD_OUT)/selftests/enpu_cs_seed $(KBUILD_OUT)/fuzz/seeds
	$(ENPU_FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -Ikmod -Iuapi \
		-o $(KBUILD_OUT)/fuzz/enpu_cs_fuzz selftests/enpu_cs_fuzz.c kmod/enpu_cs.c
	$(KBUILD_OUT)/fuzz/enpu_cs_fuzz -max_total_time=$(ENPU_FUZZ_SECONDS) -max_len=4096 \
		$(KBUILD_OUT)/fuzz/corpus $(KBUILD_OUT)/fuzz/seeds

kernel-clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(KBUILD_OUT)

# The edgert CLI linked statically, for the test VM's initramfs (no libc there);
# without the OpenCL and Vulkan backends, which need the shared ICD and
# Vulkan loaders (Makefile).
$(BUILD)/edgert-static: $(TOOL_OBJS) $(BUILD)/libedgert-nocl.a
	$(CC) $(ALL_LDFLAGS) -static -o $@ $(TOOL_OBJS) $(TRACER_OBJS) $(BUILD)/libedgert-nocl.a \
		$(filter-out $(CL_LIBS) $(VK_LIBS),$(LDLIBS)) $(TRACER_LIBS)

# The NPU backend's unit test linked statically as well: the test VM runs the
# cases that need the real driver's pinned user pages (tests/vm/models.sh).
$(BUILD)/tests/test-npu-backend-static: tests/unit/test-npu-backend.c $(TEST_COMMON_OBJS) \
		$(BUILD)/libedgert-nocl.a
	@mkdir -p $(dir $@) $(dir $(call link_dep,$@))
	$(CC) $(CPPFLAGS) -Itests/unit $(ALL_CFLAGS) $(LINK_DEPFLAGS) $(ALL_LDFLAGS) -static -o $@ $< \
		$(TEST_COMMON_OBJS) $(BUILD)/libedgert-nocl.a $(filter-out $(CL_LIBS) $(VK_LIBS),$(LDLIBS))

-include $(call link_dep,$(BUILD)/tests/test-npu-backend-static)
