# Fuzzers and the damaged-file corpus (issue 2).
#
#   make fuzz                 build every fuzz/fuzz-*.c with libFuzzer (clang) into build-fuzz/
#                             (FUZZ_BUILD=DIR: elsewhere, for a build of one's own)
#   make fuzz-run             run each for FUZZ_SECONDS (default 20, all at once) on fuzz/corpus-<name>/
#                             with fuzz/<name>.dict (extreme integers, issue 14) when there
#                             is one; FUZZ_SEED=N fixes libFuzzer's seed (make check uses 1,
#                             so a CI run explores the same inputs each time; unset: random)
#   make SAN=1 bad-input      build the damaged-file program into build-san/bad-input
#
# The fuzz build compiles every library source again with coverage
# instrumentation; it shares nothing with build/ or build-san/.

FUZZ_CC      ?= clang
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 20
FUZZ_SEED    ?=
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CPPFLAGS := -D_GNU_SOURCE -Ilibruntime/include -Ilibruntime -Ibackends -I. -I$(FUZZ_BUILD)/gen \
		 $(DRM_CFLAGS)
FUZZ_CFLAGS  := -std=c11 $(WARN) -g -O1 -pthread $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_SRCS    := $(sort $(wildcard fuzz/fuzz-*.c))
FUZZ_BINS    := $(patsubst fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRCS))
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(LIB_SRCS)) $(FUZZ_BUILD)/obj/gen/onnx.pb-c.o \
		 $(FUZZ_BUILD)/obj/gen/ocl-kernels.o $(FUZZ_BUILD)/obj/gen/vk-shaders.o

.PHONY: fuzz fuzz-run bad-input
fuzz: $(FUZZ_BINS)

$(FUZZ_BUILD)/gen/onnx.pb-c.c $(FUZZ_BUILD)/gen/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(FUZZ_BUILD)/gen
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(FUZZ_BUILD)/gen $(ONNX_PROTO)

$(FUZZ_BUILD)/obj/gen/onnx.pb-c.o: $(FUZZ_BUILD)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -I$(FUZZ_BUILD)/gen -c $< -o $@

# The Vulkan shaders as SPIR-V arrays (the Makefile's %/gen/vk-shaders.c rule).
$(FUZZ_BUILD)/obj/gen/vk-shaders.o: $(FUZZ_BUILD)/gen/vk-shaders.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

# The OpenCL kernels as C strings (the Makefile's %/gen/ocl-kernels.c rule makes the source).
$(FUZZ_BUILD)/obj/gen/ocl-kernels.o: $(FUZZ_BUILD)/gen/ocl-kernels.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/%.o: %.c | $(FUZZ_BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) $(call isa_flags,$<) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/libedgert-fuzz.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: fuzz/fuzz-%.c fuzz/fuzz-common.h $(FUZZ_BUILD)/libedgert-fuzz.a
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_BUILD)/libedgert-fuzz.a $(LDLIBS)

# New inputs go to a scratch corpus in build-fuzz/; the seeds in fuzz/ stay as committed.
# Any crash, leak, timeout or sanitizer report makes the run (and the target) fail.
# The fuzzers (one process and one thread each) run side by side, each on its own
# core of a 2-core machine; their verdicts are printed afterwards in name order.
fuzz-run: fuzz
	@for f in $(FUZZ_BINS); do \
		name=$${f#$(FUZZ_BUILD)/fuzz-}; work=$(FUZZ_BUILD)/corpus-$$name; \
		mkdir -p $$work; seeds=fuzz/corpus-$$name; [ -d $$seeds ] || seeds=; \
		dict=fuzz/$$name.dict; [ -f $$dict ] && dict=-dict=$$dict || dict=; \
		rm -f $(FUZZ_BUILD)/fuzz-$$name.rc; \
		{ $$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 $$dict \
			$(if $(FUZZ_SEED),-seed=$(FUZZ_SEED)) \
			-artifact_prefix=$(FUZZ_BUILD)/crash-$$name- -print_final_stats=0 \
			$$work $$seeds >$(FUZZ_BUILD)/fuzz-$$name.log 2>&1; \
			echo $$? >$(FUZZ_BUILD)/fuzz-$$name.rc; } & \
	done; wait; \
	fail=0; for f in $(FUZZ_BINS); do \
		name=$${f#$(FUZZ_BUILD)/fuzz-}; work=$(FUZZ_BUILD)/corpus-$$name; \
		if [ "$$(cat $(FUZZ_BUILD)/fuzz-$$name.rc 2>/dev/null)" = 0 ]; then \
			echo "fuzz-$$name: ok ($(FUZZ_SECONDS)s, $$(ls $$work | wc -l) corpus files)"; \
		else \
			echo "fuzz-$$name: FAILED (see $(FUZZ_BUILD)/fuzz-$$name.log)"; \
			tail -n 30 $(FUZZ_BUILD)/fuzz-$$name.log; fail=1; \
		fi; \
	done; exit $$fail

BAD_INPUT_SRCS := $(sort $(wildcard tests/bad-input/*.c))
bad-input: $(BUILD)/bad-input
# compiled one object a source (the pattern rule of the Makefile: header
# dependencies tracked), then linked
BAD_INPUT_OBJS := $(call obj,$(BAD_INPUT_SRCS))
$(BAD_INPUT_OBJS): CPPFLAGS += -Itests/bad-input
$(BUILD)/bad-input: $(BAD_INPUT_OBJS) $(BUILD)/libedgert.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(BAD_INPUT_OBJS) $(BUILD)/libedgert.a $(ALL_LDFLAGS) $(LDLIBS)

-include $(FUZZ_LIB_OBJS:.o=.d) $(BAD_INPUT_OBJS:.o=.d)
