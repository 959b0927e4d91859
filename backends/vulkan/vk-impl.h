/* SPDX-License-Identifier: MIT */
/*
 * vk-impl.h — private to backends/vulkan: the device, memory, pipelines,
 * steps and the per-op table.
 *
 * The backend talks to the Vulkan loader (libvulkan.so.1) with the Vulkan 1.1
 * API. Memory is one VkBuffer per arena (device-local; tensors cross to and
 * from the CPU through the session's copies at splits, staged through one
 * host-visible buffer) plus one per uploaded constant, and one per NPU arena
 * imported as a dma-buf (vk-import.c: its tensors read in place). Every shader binds
 * whole buffers and takes an element offset per tensor in its push
 * constants, so a tensor is (arena, offset) as the memory plan placed it and
 * no descriptor needs the device's offset alignment.
 *
 * Everything a step needs is made at plan time: prepare() builds its
 * pipelines, writes its descriptor sets and records its command buffer;
 * compute() only queues that command buffer, and synchronize() submits what
 * was queued in one vkQueueSubmit and waits on one fence. Layout on the device
 * is the host's (row-major, NCHW), so a copy at a split is a plain transfer.
 */
#ifndef ERT_VK_IMPL_H
#define ERT_VK_IMPL_H

#include <vulkan/vulkan.h>

#include "ert-backend-impl.h"
#include "gpu-common/gpu-ops.h"
#include "gpu-common/gpu-share.h"
#include "gpu-common/gpu-tune.h"

/* The backend's factories (session/backend.c's registry) and its device's name, for tools. */
ert_status ert_vulkan_backend_create(const ert_config *cfg, struct ert_backend **out,
				     struct ert_err *err);
ert_status ert_vulkan_backend_probe(const ert_config *cfg, struct ert_backend **out,
				    struct ert_err *err);
/* NULL for a backend of another type. */
const char *ert_vulkan_backend_device(const struct ert_backend *be);
/*
 * The speed paths it chose from the device's features, for edgert run
 * --explain ("reductions subgroup (size 8); fp16 storage, half arithmetic
 * (shaderFloat16)"); NULL for a backend of another type.
 */
const char *ert_vulkan_backend_paths(const struct ert_backend *be);

/*
 * The SPIR-V of shaders/, compiled by glslc and embedded at build time
 * (scripts/embed-spv.sh): each shader, and each but convert again in float16
 * storage as "NAME.f16" (precision LOW); the elementwise ones again in half
 * arithmetic as "NAME.f16a"; the row reductions again with subgroup
 * operations as "NAME.sg" and "NAME.f16.sg".
 */
struct ert_vk_shader_code {
	const char *name;            /* file name without .comp and a variant ("eltwise.f16") */
	const uint32_t *words;
	size_t size;                 /* bytes */
};
extern const struct ert_vk_shader_code ert_vk_shaders[];
extern const unsigned ert_vk_n_shaders;

/* Every pipeline: this many storage buffers (set 0, bindings 0..) and push constant bytes. */
#define ERT_VK_MAX_BINDINGS 6
#define ERT_VK_PUSH_WORDS 32
#define ERT_VK_MAX_SHADERS 64
#define ERT_VK_MAX_SPEC 4

/* A device timer (vk-timer.c). */
struct ert_vk_timer {
	VkQueryPool pool;
	uint32_t slots;
	double period_ns;            /* nanoseconds a tick (timestampPeriod) */
	uint64_t mask;               /* the counter's valid bits (timestampValidBits) */
};

/* The process's instance and device a session shares with others (vk-device.c). */
struct ert_vk_dev;

struct ert_vk {
	/*
	 * Shared with the process's other sessions on the device: what
	 * follows up to shared_consts is copied from it. Submits and waits on
	 * the queue go through ert_vk_queue_submit/_idle (its lock).
	 */
	struct ert_vk_dev *shared;
	VkInstance instance;
	VkPhysicalDevice phys;
	VkDevice dev;
	VkQueue queue;
	uint32_t queue_family;
	uint32_t timestamp_bits;     /* the queue family's timestampValidBits (0: no timestamps) */
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties mem_props;
	VkDescriptorSetLayout set_layout;
	VkPipelineLayout pipe_layout;
	/*
	 * The device's pipelines (objects: VkPipeline, key: struct
	 * ert_vk_pipe_key) and its shader modules, made under the table's lock
	 * through the device's pipeline cache (pipe_cache, the cache files'
	 * bytes merged into it); its uploaded constants (vk-backend.c).
	 */
	struct ert_gpu_share *shared_pipes;
	VkShaderModule *modules;     /* ERT_VK_MAX_SHADERS, under shared_pipes' lock */
	VkPipelineCache pipe_cache;
	struct ert_gpu_share *shared_consts;
	bool validation;             /* ERT_VULKAN_VALIDATION: the Khronos layer on */
	uint32_t validation_seen;    /* the instance's error count when last checked */
	/* the session's own */
	VkCommandPool cmd_pool;
	VkFence fence;
	/* the cache file of the pipeline cache (vk-cache.c) */
	char *cache_path;            /* ert_config.cache_path, or NULL */
	bool cache_loaded;           /* the file's bytes went to the driver */
	bool cache_rejected;         /* the file was there and was ignored (warned) */
	bool cache_dirty;            /* a pipeline was built since it was read or written */
	bool cache_unwritable;       /* a write failed (and was reported): no more tries */
	bool cache_in_file;          /* the file holds cache_size bytes of this cache */
	char cache_note[384];        /* the last warning about the file (for tests), or "" */
	size_t cache_size;
	/* the session's holds on the device's pipelines (kept for its life) */
	struct ert_gpu_holds pipes;
	ert_level precision;
	/*
	 * Precision LOW in float16 storage (VK_KHR_16bit_storage's
	 * storageBuffer16BitAccess, enabled at device creation; not with
	 * ERT_VULKAN_F16=off): fp16_storage() says yes, steps with
	 * ert_exec.fp16 run the shaders' .f16 variants, and buffer_convert()
	 * dispatches convert.comp (its pipeline made when the device opens).
	 */
	bool f16_storage;
	/*
	 * The speed paths the device's features allow (ert_vk_paths_choose):
	 * f16_arith, the elementwise ops of float16 steps in half arithmetic
	 * (their ".f16a" variants; shaderFloat16); subgroup, the row
	 * reductions' ".sg" variants (subgroup arithmetic in compute shaders).
	 * paths: what was chosen and why, for edgert run --explain.
	 */
	bool f16_arith;
	bool subgroup;
	char paths[256];
	VkPipeline convert;
	/*
	 * GEMMs on gemm_direct.comp instead of the tiled gemm.comp: on CPU
	 * implementations, where barriers cost more than caches save;
	 * ERT_VULKAN_GEMM=tiled|direct chooses (tests run both).
	 */
	bool gemm_direct;
	bool gemm_forced;            /* by ERT_VULKAN_GEMM: the tuner offers no other shader */
	/* autotuning (vk-tune.c): the mode, the table (kept in the cache file), what it did */
	ert_tune tune;
	struct ert_tune_table tuned;
	uint32_t tune_timed, tune_reused, tune_refused;
	struct ert_vk_timer tune_timer;
	VkCommandBuffer tune_cmd;
	bool tune_untimed;           /* the device has no timestamps (said once): built-in choices */
	/* where preparing went (prep_times): device, cache, pipelines (as programs), tuning, uploads */
	struct ert_backend_times times;
	/* the staging buffer of the copies at splits: host-visible, coherent, mapped */
	VkBuffer staging;
	VkDeviceMemory staging_mem;
	void *staging_map;
	size_t staging_size, staging_used;
	/*
	 * What the next submit runs, in order: steps' command buffers and the
	 * staged copies, recorded into copy_cmds (copy_open: the last one is
	 * still being recorded and is the last of pending).
	 */
	VkCommandBuffer *pending;
	uint32_t n_pending, cap_pending;
	VkCommandBuffer copy_cmds[8];
	uint32_t n_copy_cmds;        /* of copy_cmds, those allocated */
	uint32_t used_copy_cmds;     /* of those, the ones in pending */
	bool copy_open;
	/* the session's holds on the device's constants, shared by every plan's steps */
	struct ert_gpu_holds consts;
	size_t const_bytes;          /* of the steps' own tables (resident with consts.bytes) */
	uint64_t copied;             /* bytes through buffer_write/buffer_read */
	/*
	 * dma-buf import (vk-import.c): the device has VK_KHR_external_memory_fd
	 * and VK_EXT_external_memory_dma_buf, both enabled, and its
	 * vkGetMemoryFdPropertiesKHR, and $ERT_VULKAN_DMABUF is not "off";
	 * else why not, for the import's error.
	 */
	bool dmabuf;
	const char *dmabuf_why;
	PFN_vkGetMemoryFdPropertiesKHR get_fd_props;
	/*
	 * ert_config.device_times: each step's command buffer is recorded
	 * between two timestamps (its own ert_vk_timer), read back by the
	 * backend's device_time op for edgert profile. Off: no query at all.
	 */
	bool device_times;
};

/*
 * An arena (ert_buffer.handle): one buffer and its memory; with float16
 * storage, the descriptor set convert.comp binds it with (made with it).
 */
struct ert_vk_arena {
	VkBuffer buf;
	VkDeviceMemory mem;
	VkDescriptorPool convert_pool;
	VkDescriptorSet convert_set;
};

/* ---- dma-buf import (vk-import.c) ---- */

/*
 * Whether to import dma-bufs, from the device's @n extensions @exts and
 * $ERT_VULKAN_DMABUF (@env: NULL, "" or "auto" to use them where present,
 * "off" never): 1 yes, 0 no (*@why_out says why, a static string), -1 for a
 * malformed @env. Pure, for tests.
 */
int ert_vk_dmabuf_decide(const VkExtensionProperties *exts, uint32_t n, const char *env,
			 const char **why_out);
/*
 * Before vkCreateDevice of @phys: when the device has both extensions,
 * append their names to @names (room for two more after *@n_names) and say
 * so in *@enabled_out; else *@why_out says which it lacks. Only
 * OUT_OF_MEMORY fails.
 */
ert_status ert_vk_dmabuf_enable(VkPhysicalDevice phys, const char **names, uint32_t *n_names,
				bool *enabled_out, const char **why_out, struct ert_err *err);
/* After it: the entry point the import needs when @enabled (NULL, saying why, when none). */
PFN_vkGetMemoryFdPropertiesKHR ert_vk_dmabuf_entry(VkDevice dev, bool enabled,
						   const char **why_out);
/*
 * A session's choice: vk->dmabuf when the device gave @fn and
 * $ERT_VULKAN_DMABUF is not "off" (vk->dmabuf_why: @dev_why or the
 * variable). INVALID_ARGUMENT for a malformed variable.
 */
ert_status ert_vk_dmabuf_setup(struct ert_vk *vk, PFN_vkGetMemoryFdPropertiesKHR fn,
			       const char *dev_why, struct ert_err *err);
/*
 * Import the first @size bytes of dma-buf @fd (a dup of it) into @a: a
 * storage buffer bound to the imported memory, of a type that both the
 * buffer and vkGetMemoryFdPropertiesKHR for @fd allow. UNSUPPORTED without
 * the extensions; on any failure nothing is left (fd dup closed).
 */
ert_status ert_vk_import_fd(struct ert_vk *vk, int fd, size_t size, struct ert_vk_arena *a,
			    struct ert_err *err);

/* ---- errors (vk-error.c) ---- */

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY" for -2; "VK_RESULT(-1234)" for codes it does not know. */
const char *ert_vk_result_name(VkResult rc);
/*
 * Set @err to "vulkan: <what> failed[ for <Op> '<node>'] (<VK name>)" and
 * return the status for @rc: OUT_OF_MEMORY for allocation failures,
 * BACKEND otherwise. @n may be NULL.
 */
ert_status ert_vk_fail(struct ert_err *err, VkResult rc, const char *what,
		       const struct ert_node *n);

/* ---- device (vk-device.c) ---- */

/*
 * Take an instance and choose a device: $ERT_VULKAN_DEVICE (an index as
 * vulkaninfo --summary lists them), else the first discrete GPU, else the
 * first integrated one, else the first of any type (a CPU implementation
 * such as lavapipe). With @gpu_only, only a GPU will do (the AUTO backend
 * list). UNSUPPORTED when there is no loader or no device; INVALID_ARGUMENT
 * for a malformed or out-of-range variable. The instance (one per
 * $ERT_VULKAN_VALIDATION setting), the device, its compute queue and the one
 * pipeline layout are the process's, shared by every session that chooses
 * the same and destroyed with the last (thread-safe; vk->times.device_shared
 * says whether another session had it open); the command pool and fence are
 * the session's.
 */
ert_status ert_vk_device_open(struct ert_vk *vk, bool gpu_only, struct ert_err *err);

/* Whether @phys lists device extension @name. */
bool ert_vk_device_has_ext(VkPhysicalDevice phys, const char *name);

/* What a device reports of the features the speed paths need. */
struct ert_vk_caps {
	bool storage16;              /* storageBuffer16BitAccess (VK_KHR_16bit_storage) */
	bool float16;                /* shaderFloat16 (VK_KHR_shader_float16_int8) */
	bool subgroup_arith;         /* subgroup basic + arithmetic ops in compute shaders */
	uint32_t subgroup_size;      /* VkPhysicalDeviceSubgroupProperties.subgroupSize */
};

/*
 * @c from what the device reported: its 16-bit storage features, its
 * float16/int8 features (NULL where it does not list
 * VK_KHR_shader_float16_int8) and subgroup properties (arithmetic needs
 * the compute stage and the basic and arithmetic operations).
 */
void ert_vk_caps_make(const VkPhysicalDevice16BitStorageFeatures *s16,
		      const VkPhysicalDeviceShaderFloat16Int8FeaturesKHR *f16,
		      const VkPhysicalDeviceSubgroupProperties *sg, struct ert_vk_caps *c);

/* What a session's backend uses of them. */
struct ert_vk_paths {
	bool f16_storage;            /* float32 tensors of LOW steps stored as float16 */
	bool f16_arith;              /* and the elementwise ops of those steps in half */
	bool subgroup;               /* the row reductions with subgroup operations */
	char note[256];              /* "fp16 storage + half arithmetic, subgroup reductions (8)" */
};

/*
 * Choose the paths from @caps, the session's @precision and the variables'
 * values (NULL when unset): @f16 ($ERT_VULKAN_F16) "off" keeps LOW in
 * float32, "storage" insists on float16 storage with float arithmetic,
 * "arith" on float16 storage and half arithmetic (UNSUPPORTED on a device
 * without what it insists on), unset takes what the device has; @sg
 * ($ERT_VULKAN_SUBGROUP) "off" keeps the shared-memory reductions, "on"
 * insists on subgroup ones, unset takes them where the device has them.
 * Another value is INVALID_ARGUMENT. @name: the device's, for messages.
 */
ert_status ert_vk_paths_choose(const struct ert_vk_caps *caps, ert_level precision,
			       const char *f16, const char *sg, const char *name,
			       struct ert_vk_paths *out, struct ert_err *err);
void ert_vk_device_close(struct ert_vk *vk);
/* vkQueueSubmit of one batch on the shared queue, under its lock. */
VkResult ert_vk_queue_submit(struct ert_vk *vk, const VkSubmitInfo *si, VkFence fence);
/* vkQueueWaitIdle under the queue's lock (waits for every session's work on the device). */
void ert_vk_queue_idle(struct ert_vk *vk);
/* The process's open Vulkan instances plus devices (0 once every session is gone; for tests). */
uint32_t ert_vk_devices_open(void);
/*
 * BACKEND with the last message when the validation layer reported errors
 * since the last call (or since the session opened): the instance's, so
 * an error of another session on it fails this one too (the layer does not
 * say which session made the call).
 */
ert_status ert_vk_validation_check(struct ert_vk *vk, struct ert_err *err);

/* ---- the cache file (vk-cache.c) ---- */

/*
 * Read the cache file at @path (NULL: no file): when it holds a pipeline
 * cache made for this device and driver, its bytes are merged into the
 * device's VkPipelineCache, and its tuning table is the backend's. A file
 * that cannot be used is ignored with a warning on stderr and rewritten.
 */
ert_status ert_vk_cache_open(struct ert_vk *vk, const char *path, struct ert_err *err);
/* Rewrite the file when a pipeline was built since it was read or written. */
void ert_vk_cache_flush(struct ert_vk *vk);
void ert_vk_cache_close(struct ert_vk *vk);

/* ---- device timestamps (vk-timer.c) ---- */

/*
 * A timer: @slots timestamp queries. In a command buffer, reset the slots it
 * will write (ert_vk_timer_reset, before the first write, outside the timed
 * work), then write a timestamp before and after the work to time
 * (ert_vk_timer_stamp: when everything recorded before it has completed, so
 * the work between two stamps is what the barriers before it let run there).
 * Once the command buffer has run (the fence waited on), read the slots back.
 * (struct ert_vk_timer is above, with struct ert_vk, which holds the tuner's.)
 *
 * Make a timer of @slots timestamps (1..65536). UNSUPPORTED, saying so, when
 * the device's compute queue has no timestamps (timestampValidBits 0, or
 * $ERT_VULKAN_TEST_NO_TIMESTAMPS set, a test hook); the caller then does
 * without (the tuner keeps the built-in choices).
 */
ert_status ert_vk_timer_new(struct ert_vk *vk, uint32_t slots, struct ert_vk_timer *t,
			    struct ert_err *err);
void ert_vk_timer_free(struct ert_vk *vk, struct ert_vk_timer *t);
/* Record a reset of slots @first..@first+@count-1 (clipped to the timer) into @cmd. */
void ert_vk_timer_reset(VkCommandBuffer cmd, const struct ert_vk_timer *t, uint32_t first,
			uint32_t count);
/* Record a write of slot @slot (bottom of pipe: once all earlier commands are done). */
void ert_vk_timer_stamp(VkCommandBuffer cmd, const struct ert_vk_timer *t, uint32_t slot);
/*
 * Read slots @first..@first+@count-1 into @ns as nanoseconds since slot
 * @first (ns[0] = 0; the time of the work between slots i and i+1 is
 * ns[i+1] - ns[i]; a counter that wrapped is accounted for). BACKEND when a
 * slot was not written or its work has not run (nothing waits; @ns is then
 * left as it was).
 */
ert_status ert_vk_timer_read(struct ert_vk *vk, const struct ert_vk_timer *t, uint32_t first,
			     uint32_t count, uint64_t *ns, struct ert_err *err);

/* ---- memory (vk-memory.c) ---- */

/* A buffer and its own memory; @host: host-visible and coherent (mapped into *@map). */
/*
 * The first memory type in @bits with every flag of @want, preferring one
 * with every flag of @prefer; -1 when none.
 */
int ert_vk_memory_type(const struct ert_vk *vk, uint32_t bits, VkMemoryPropertyFlags want,
		       VkMemoryPropertyFlags prefer);
ert_status ert_vk_buffer_new(struct ert_vk *vk, VkDeviceSize size, bool host, VkBuffer *buf,
			     VkDeviceMemory *mem, void **map, const struct ert_node *n,
			     struct ert_err *err);
void ert_vk_buffer_del(struct ert_vk *vk, VkBuffer buf, VkDeviceMemory mem);
/* A device buffer holding @size bytes of @data, uploaded now (waits). */
ert_status ert_vk_buffer_upload(struct ert_vk *vk, const void *data, size_t size, VkBuffer *buf,
				VkDeviceMemory *mem, const struct ert_node *n, struct ert_err *err);
/*
 * Copies at splits: a write is staged and queued (the host bytes may be
 * reused on return); a read submits everything queued and waits.
 */
ert_status ert_vk_write(struct ert_vk *vk, VkBuffer dst, size_t offset, const void *src,
			size_t size, struct ert_err *err);
ert_status ert_vk_read(struct ert_vk *vk, VkBuffer src, size_t offset, void *dst, size_t size,
		       struct ert_err *err);
/*
 * Precision LOW: the descriptor set of arena @a for convert.comp (both its
 * bindings the arena's buffer), and a conversion of @count elements in it
 * from element @so (float16 when @widen, else float32) to element @dof of
 * the other type, queued in order with the steps and copies.
 */
ert_status ert_vk_convert_set(struct ert_vk *vk, struct ert_vk_arena *a, struct ert_err *err);
void ert_vk_convert_set_del(struct ert_vk *vk, struct ert_vk_arena *a);
ert_status ert_vk_convert(struct ert_vk *vk, const struct ert_vk_arena *a, size_t so, size_t dof,
			  size_t count, bool widen, struct ert_err *err);
/* Submit what is queued (steps, staged copies) with one fence, and wait for it. */
ert_status ert_vk_flush(struct ert_vk *vk, struct ert_err *err);
void ert_vk_memory_close(struct ert_vk *vk);

/* ---- constants (vk-backend.c) ---- */

/*
 * A device copy of constant @data (@size bytes), uploaded on first request
 * and shared: every step of every plan that asks for the same bytes (and
 * storage) gets the same buffer, and so does every session of the process
 * on the same device (two sessions of one model upload its weights once;
 * gpu-common/gpu-share.h). @f16: float32 data stored as float16 (a step in
 * float16, precision LOW). Drop it with ert_vk_const_put().
 */
ert_status ert_vk_const_get(struct ert_vk *vk, const void *data, size_t size, bool f16,
			    struct ert_gpu_hold **out, const struct ert_node *n,
			    struct ert_err *err);
void ert_vk_const_put(struct ert_vk *vk, struct ert_gpu_hold *c);
VkBuffer ert_vk_const_buffer(const struct ert_gpu_hold *c);
/* The device's tables' objects (struct ert_vk_const_obj; a VkPipeline), freed with the last hold. */
struct ert_vk_const_obj {
	VkBuffer buf;
	VkDeviceMemory mem;
};
void ert_vk_const_free(void *dev, void *obj);
void ert_vk_pipeline_free(void *dev, void *obj);

/* ---- pipelines (vk-pipeline.c) ---- */

/* The index of shader @name among ert_vk_shaders, or -1. */
int ert_vk_shader_index(const char *name);
/*
 * The compute pipeline of shader @name with specialization constants @spec
 * (@n_spec of them, constant ids 0..): the session's, else the device's
 * (made by another session of the process: programs_shared), else built
 * through the device's pipeline cache (programs_built) and kept by the
 * device; held for the backend's life, freed with the last session holding it.
 */
ert_status ert_vk_pipeline_get(struct ert_vk *vk, const char *name, const uint32_t *spec,
			       uint32_t n_spec, VkPipeline *out, const struct ert_node *n,
			       struct ert_err *err);
void ert_vk_pipelines_release(struct ert_vk *vk);

/* ---- steps and launches (vk-step.c) ---- */

#define ERT_VK_MAX_LAUNCHES 32
#define ERT_VK_MAX_CONSTS 32

/* A tensor on the device: a buffer and an offset in elements as stored (es bytes each). */
struct ert_vk_ref {
	VkBuffer buf;
	int32_t off;
	uint32_t es;
};

/*
 * A launch the tuner may change (vk-tune.c): its variants, each a shader
 * whose local size is specialization constant 0 (1-D: items along x, laid
 * out over a 2-D grid of groups) or constants 0 and 1 (2-D: a tile of
 * items, groups = global / local per dim); variant 0 is the built-in choice.
 */
struct ert_vk_tunable {
	struct ert_tune_space space;
	const char *shader[ERT_TUNE_MAX_VARIANTS];
	uint32_t spec[ERT_TUNE_MAX_VARIANTS][ERT_VK_MAX_SPEC];  /* constants past the local size */
	uint32_t n_spec[ERT_TUNE_MAX_VARIANTS];
	uint32_t zgroups;            /* groups along z (batches), every variant */
	const char *name;            /* the tuning table's kernel name */
};

struct ert_vk_launch {
	VkPipeline pipe;
	uint32_t groups[3];
	VkBuffer bind[ERT_VK_MAX_BINDINGS];
	uint32_t n_bind;
	uint32_t push[ERT_VK_PUSH_WORDS];
	uint32_t n_push;
	uint32_t off_mask;           /* bit i: push word i is a tensor's offset (not in the tuning key) */
	struct ert_vk_tunable *tunable;  /* what the tuner may choose from, until it has (or NULL) */
	/* a copy within device memory (views) in place of a dispatch */
	bool is_copy;
	VkBufferCopy region;
};

/* What prepare() makes for a step (ert_exec.state); freed by release(). */
struct ert_vk_step {
	struct ert_vk_launch launch[ERT_VK_MAX_LAUNCHES];
	uint32_t n_launch;
	struct ert_gpu_hold *consts[ERT_VK_MAX_CONSTS];
	uint32_t n_consts;
	/* small read-only tables of the step's own (gemm batch offsets, Gather indices) */
	VkBuffer tables[2];
	VkDeviceMemory table_mem[2];
	size_t table_bytes[2];
	uint32_t n_tables;
	VkDescriptorPool desc_pool;
	VkCommandBuffer cmd;         /* recorded once by ert_vk_step_record() */
	/* with vk->device_times: slot 0 before the step's commands, 1 after (pool NULL: none) */
	struct ert_vk_timer timer;
	bool queued;                 /* cmd was queued since the step was recorded */
	const struct ert_node *node; /* for messages */
	/*
	 * ert_exec.fp16: float32 tensors stored as float16 (the ops launch
	 * the shaders' .f16 variants, constants are uploaded converted)
	 */
	bool f16;
	bool f16a;                   /* a launch runs a half-arithmetic (.f16a) shader */
	bool overflow;               /* too many bindings or push words (a bug: reported by check) */
};

/*
 * Input @k of @x: its place in the arena, or its constant's upload (kept by
 * @st). BACKEND when it is neither (the planner put it where the device
 * cannot read it).
 */
ert_status ert_vk_in(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st, uint32_t k,
		     struct ert_vk_ref *out, struct ert_err *err);
/* Output @k of @x in the arena. */
ert_status ert_vk_out(const struct ert_exec *x, uint32_t k, struct ert_vk_ref *out,
		      struct ert_err *err);
/*
 * Add a dispatch of shader @shader (specialization constants @spec) with
 * @groups work-groups; its buffers and push constants follow with the
 * ert_vk_arg_*() calls, in the order the shader declares them: a ref binds
 * the next binding and pushes its offset. @shader NULL: no pipeline yet (a
 * launch the tuner will give one, ert_vk_launch_tunable).
 */
ert_status ert_vk_launch_add(struct ert_vk *vk, struct ert_vk_step *st, const char *shader,
			     const uint32_t *spec, uint32_t n_spec, const uint32_t groups[3],
			     struct ert_err *err);
/* The first dimension (0..2) where @groups is over maxComputeWorkGroupCount, else -1. */
int ert_vk_groups_over(const struct ert_vk *vk, const uint32_t groups[3]);
void ert_vk_arg_ref(struct ert_vk_step *st, const struct ert_vk_ref *r);
/*
 * A dispatch the tuner chooses among @t's variants for (copied): added as
 * variant 0 at its built-in local size; its arguments follow as for
 * ert_vk_launch_add (every variant takes the same). Nothing is kept for the
 * tuner under ERT_TUNE_NONE.
 */
ert_status ert_vk_launch_tunable(struct ert_vk *vk, struct ert_vk_step *st,
				 const struct ert_vk_tunable *t, struct ert_err *err);
/*
 * Whether @t's launch at its built-in variant (the one ert_vk_launch_tunable
 * adds) is within the device's work-group counts: an op's supports() refuses
 * a node that would fail at prepare (a MatMul of more batches than
 * maxComputeWorkGroupCount[2]), so that the CPU takes it.
 */
bool ert_vk_tunable_fits(const struct ert_vk *vk, const struct ert_vk_tunable *t);
void ert_vk_arg_buf(struct ert_vk_step *st, VkBuffer b);
void ert_vk_arg_int(struct ert_vk_step *st, int32_t v);
void ert_vk_arg_float(struct ert_vk_step *st, float v);
/* A device-to-device copy of @bytes (views); nothing when source and destination are one. */
ert_status ert_vk_copy_add(struct ert_vk_step *st, const struct ert_vk_ref *src,
			   const struct ert_vk_ref *dst, size_t elsize, size_t bytes,
			   struct ert_err *err);
/* A read-only device copy of @count ints, owned by @st (counted as resident). */
ert_status ert_vk_table(struct ert_vk *vk, struct ert_vk_step *st, const int32_t *data,
			size_t count, VkBuffer *out, struct ert_err *err);
/* Write the descriptor sets and record the step's command buffer (once). */
ert_status ert_vk_step_record(struct ert_vk *vk, struct ert_vk_step *st, struct ert_err *err);
/* Into @cmd: the barrier before each launch (earlier shader and transfer writes visible). */
void ert_vk_cmd_barrier(VkCommandBuffer cmd);
/* Into @cmd: launch @l's dispatch (or copy) with descriptor set @set. */
void ert_vk_cmd_launch(struct ert_vk *vk, VkCommandBuffer cmd, const struct ert_vk_launch *l,
		       VkDescriptorSet set);
/* Queue @cmd (recorded, ended) for the next submit (ert_vk_flush), after what is queued. */
ert_status ert_vk_queue_cmd(struct ert_vk *vk, VkCommandBuffer cmd, struct ert_err *err);
/* Queue the step's command buffer for the next submit. */
ert_status ert_vk_step_queue(struct ert_vk *vk, struct ert_vk_step *st, struct ert_err *err);
void ert_vk_step_free(struct ert_vk *vk, struct ert_vk_step *st);
/*
 * The step's time on the device the last time it ran, in nanoseconds, once
 * the submit that ran it was waited on: false when it is not timed (no
 * device_times, no commands, no timestamps on this device) or has not run.
 */
bool ert_vk_step_device_ns(struct ert_vk *vk, const struct ert_vk_step *st, uint64_t *ns_out);

/* ---- autotuning (vk-tune.c) ---- */

/*
 * Choose launch @l's variant and local size (ert_vk.tune): from the table
 * when it has an entry that serves, else by timing every candidate on the
 * step's buffers (descriptor set @set) with device timestamps; then set
 * @l's pipeline and groups. A device without timestamps keeps the built-in
 * choice (said once on stderr).
 */
ert_status ert_vk_tune_launch(struct ert_vk *vk, struct ert_vk_step *st, struct ert_vk_launch *l,
			      VkDescriptorSet set, struct ert_err *err);
void ert_vk_tune_close(struct ert_vk *vk);

/*
 * ---- ops (ops/ *.c): one table per family, ended by an entry with .prepare
 * NULL, an entry per kind of op of gpu-common/gpu-ops.h (which plans them) ----
 */

struct ert_vk_op {
	enum ert_gpu_kind kind;
	/* optional: limits of the device beyond gpu-common's (ert_gpu_supports) */
	bool (*supports)(const struct ert_vk *vk, const struct ert_exec *x);
	/* adds the step's launches with every argument set */
	ert_status (*prepare)(struct ert_vk *vk, struct ert_exec *x, struct ert_vk_step *st,
			      struct ert_err *err);
	/* the kernel name `edgert profile` shows */
	const char *kernel_name;
};

extern const struct ert_vk_op ert_vk_ops_eltwise[];
extern const struct ert_vk_op ert_vk_ops_linalg[];
extern const struct ert_vk_op ert_vk_ops_pool[];
extern const struct ert_vk_op ert_vk_ops_norm[];
extern const struct ert_vk_op ert_vk_ops_movement[];

/* The table entry for @op's kind, or NULL (ops/registry.c). */
const struct ert_vk_op *ert_vk_op_find(enum ert_op op);
/* Has this build a Vulkan shader for @op (false in a build without Vulkan)? */
bool ert_vk_claims_op(enum ert_op op);

#endif /* ERT_VK_IMPL_H */
