/* SPDX-License-Identifier: MIT */
/*
 * edgert.h — the public C API of libedgert.
 *
 * libedgert loads a model (an .ert file, or an .onnx file converted on the fly),
 * plans it once for a set of input shapes, and runs it many times.
 *
 * Lifecycle (create → reshape → setup → run):
 *
 *   ert_model_load_file()      map the model; its weights are used in place
 *   ert_session_create()       shape inference, placement on backends, memory plan,
 *                              kernels prepared (weights packed once per session,
 *                              shared by every cached plan; see ert_config.memory)
 *   ert_session_get_input()    find an input; write its data through
 *                              ert_tensor_data() or ert_session_set_input()
 *   ert_session_resize_input() optional: new input shape → re-plan (plans are
 *                              cached by input-shape signature)
 *   ert_session_run()          walk the plan; allocates nothing
 *   ert_session_get_output()   read results through ert_tensor_data()
 *
 * Worked example (error handling shortened to the pattern to follow):
 *
 *   #include <edgert.h>
 *
 *   ert_model *model = NULL;
 *   ert_session *sess = NULL;
 *   ert_config cfg;
 *   char err[256];
 *
 *   if (ert_model_load_file("mobilenet_v2.ert", &model, err, sizeof(err)) != ERT_OK) {
 *       fprintf(stderr, "failed to load model: %s\n", err);
 *       return 1;
 *   }
 *   ert_config_init(&cfg);                 // CPU backend, normal precision, all cores
 *   cfg.num_threads = 4;
 *   if (ert_session_create(model, &cfg, &sess) != ERT_OK) {
 *       fprintf(stderr, "failed to create session: %s\n", ert_last_error());
 *       goto out;
 *   }
 *   ert_tensor *in = ert_session_get_input(sess, 0);
 *   float *x = ert_tensor_data(in);        // 1x3x224x224 float32, NCHW
 *   fill_image(x, ert_tensor_element_count(in));
 *   if (ert_session_run(sess) != ERT_OK) {
 *       fprintf(stderr, "failed to run: %s\n", ert_session_error(sess));
 *       goto out;
 *   }
 *   const ert_tensor *out = ert_session_get_output(sess, 0);
 *   const float *logits = ert_tensor_data(out);
 *   ...
 * out:
 *   ert_session_destroy(sess);             // both accept NULL
 *   ert_model_unref(model);
 *
 * Thread safety:
 *   - An ert_model is immutable after loading and reference counted: any number of
 *     sessions on any threads may share one model.
 *   - An ert_session is not thread safe: use one session per thread, or serialise
 *     calls on a session yourself. Sessions are independent of each other.
 *   - ert_last_error() is thread local.
 *   - Callbacks run on the thread that called ert_session_run().
 *
 * Callbacks (ert_config.before_op / after_op) run in the middle of a run, so
 * they must not change what the run is using. On the session being run, a
 * callback may call the accessors: ert_session_error(), _input_count(),
 * _output_count(), _get_input*(), _get_output*(), _peak_bytes(),
 * _copied_bytes() and the ert_tensor_*() functions (an output's data is
 * meaningful only once the op writing it has run). ert_session_run(),
 * ert_session_resize_input() and ert_session_set_input() on that session
 * fail with ERT_STATUS_BUSY and change nothing; ert_session_destroy() on it
 * does nothing and sets ert_last_error(). Other sessions and models may be
 * used freely.
 *
 * Ownership: every pointer returned by this API is owned by the object it came
 * from and lives as long as that object, unless the function says otherwise.
 * Tensor data pointers of a session stay valid until the next resize or destroy.
 */
#ifndef EDGERT_H
#define EDGERT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ERT_API __attribute__((visibility("default")))
#else
#define ERT_API
#endif

#define ERT_VERSION_MAJOR 0
#define ERT_VERSION_MINOR 1
#define ERT_VERSION_PATCH 0

/** Status codes: 0 is success, every failure is a specific negative value. */
typedef enum ert_status {
	ERT_OK = 0,
	ERT_STATUS_INVALID_ARGUMENT = -1, /* a caller passed a bad argument */
	ERT_STATUS_OUT_OF_MEMORY = -2,
	ERT_STATUS_IO = -3,               /* open/read/mmap failed */
	ERT_STATUS_INVALID_MODEL = -4,    /* damaged or inconsistent model file */
	ERT_STATUS_VERSION = -5,          /* model format newer than this runtime */
	ERT_STATUS_UNSUPPORTED = -6,      /* op, dtype or attribute not supported */
	ERT_STATUS_SHAPE = -7,            /* shapes do not fit together */
	ERT_STATUS_DTYPE = -8,            /* wrong element type */
	ERT_STATUS_BACKEND = -9,          /* a backend failed (device error, timeout) */
	ERT_STATUS_STOPPED = -10,         /* an after-op callback stopped the run */
	ERT_STATUS_NOT_FOUND = -11,       /* no input/output of that name */
	ERT_STATUS_INTERNAL = -12,
	ERT_STATUS_BUSY = -13,            /* the session is running (a call from a callback) */
} ert_status;

/** Human-readable name of a status ("invalid model", ...). Never NULL. */
ERT_API const char *ert_status_string(ert_status status);

/** Element types; the values are ONNX's TensorProto.DataType numbers. */
typedef enum ert_dtype {
	ERT_DTYPE_UNDEFINED = 0,
	ERT_DTYPE_FLOAT32 = 1,
	ERT_DTYPE_UINT8 = 2,
	ERT_DTYPE_INT8 = 3,
	ERT_DTYPE_UINT16 = 4,
	ERT_DTYPE_INT16 = 5,
	ERT_DTYPE_INT32 = 6,
	ERT_DTYPE_INT64 = 7,
	ERT_DTYPE_STRING = 8,       /* elements are ert_string (below); CPU backend only */
	ERT_DTYPE_BOOL = 9,
	ERT_DTYPE_FLOAT16 = 10,
	ERT_DTYPE_FLOAT64 = 11,
	ERT_DTYPE_UINT32 = 12,
	ERT_DTYPE_UINT64 = 13,
	ERT_DTYPE_COMPLEX64 = 14,   /* not supported */
	ERT_DTYPE_COMPLEX128 = 15,  /* not supported */
	ERT_DTYPE_BFLOAT16 = 16,
	ERT_DTYPE_FLOAT8E4M3FN = 17,
	ERT_DTYPE_FLOAT8E4M3FNUZ = 18,
	ERT_DTYPE_FLOAT8E5M2 = 19,
	ERT_DTYPE_FLOAT8E5M2FNUZ = 20,
	ERT_DTYPE_UINT4 = 21,       /* two per byte, low nibble first */
	ERT_DTYPE_INT4 = 22,        /* two per byte, low nibble first */
	ERT_DTYPE_COUNT
} ert_dtype;

/** Name of a dtype as ONNX spells it in lower case ("float32", "int8", ...). */
ERT_API const char *ert_dtype_name(ert_dtype dtype);

/**
 * One element of an ERT_DTYPE_STRING tensor: @len bytes at @data (UTF-8 by
 * ONNX's convention; not NUL-terminated, and may hold NUL bytes). The data of
 * a string tensor (ert_tensor_data(), ert_session_set_input()) is an array of
 * these, one per element, and its byte size counts the array only.
 *
 * Who owns the bytes: ert_session_set_input() copies the strings of an input
 * into the session, so the caller's may go at once. The strings of an output
 * point into the model (constants) or into the session (inputs, strings ops
 * made during the run); they stay valid until the next ert_session_run() or
 * ert_session_set_input() of the session, or until it is destroyed.
 *
 * Example, a [2] string input and a [2] string output:
 *
 *     ert_string words[2] = { { "hello", 5 }, { "world", 5 } };
 *     ert_session_set_input(sess, 0, ERT_DTYPE_STRING, words, sizeof(words));
 *     ert_session_run(sess);
 *     const ert_string *out = ert_tensor_data(ert_session_get_output(sess, 0));
 *     printf("%.*s\n", (int)out[0].len, out[0].data);
 */
typedef struct ert_string {
	const char *data;
	uint64_t len;
} ert_string;

/**
 * What a model input or output holds (docs/sequences.md). Most are tensors.
 * ONNX's sequence and optional types are values of another kind: a
 * sequence holds any number of tensors of one dtype (their shapes may
 * differ), an optional holds one tensor or nothing, an optional sequence
 * a sequence or nothing. Such an input or output is a handle: its dtype,
 * rank and data (ert_tensor_data() gives NULL) say nothing about its
 * contents; read them with ert_tensor_item_count() and ert_tensor_get_item(),
 * set them with ert_session_set_input_items().
 */
typedef enum ert_value_kind {
	ERT_VALUE_TENSOR = 0,
	ERT_VALUE_SEQUENCE = 1,
	ERT_VALUE_OPTIONAL = 2,           /* optional tensor */
	ERT_VALUE_OPTIONAL_SEQUENCE = 3,  /* optional sequence of tensors */
} ert_value_kind;

/** Memory layout of a tensor as seen by the application. */
typedef enum ert_layout {
	ERT_LAYOUT_ANY = 0,   /* no spatial meaning (vectors, sequences, ...) */
	ERT_LAYOUT_NCHW = 1,  /* 4-D image tensors as ONNX defines them */
	ERT_LAYOUT_NHWC = 2,
} ert_layout;

/** Backends, in the order a config lists them. */
typedef enum ert_backend_type {
	ERT_BACKEND_CPU = 0,
	ERT_BACKEND_OPENCL = 1,
	ERT_BACKEND_VULKAN = 2,
	ERT_BACKEND_NPU = 3,
	ERT_BACKEND_AUTO = 4, /* the best available, CPU last */
} ert_backend_type;

/** Name of a backend type ("cpu", "opencl", ...). */
ERT_API const char *ert_backend_type_name(ert_backend_type type);

/** Hints: NORMAL is the default; HIGH/LOW trade one resource for another. */
/* CPU kernel levels (x86-64), lowest first; see ert_config.cpu_level. */
typedef enum ert_cpu_level {
	ERT_CPU_LEVEL_AUTO = 0,       /* the best the CPU and OS support */
	ERT_CPU_LEVEL_SCALAR = 1,     /* portable C: the reference kernels */
	ERT_CPU_LEVEL_AVX2 = 2,       /* AVX2 + FMA */
	ERT_CPU_LEVEL_AVX512 = 3,     /* AVX-512 F/BW/VL/DQ */
	ERT_CPU_LEVEL_AVX512VNNI = 4, /* ... + VNNI (int8 dot products) */
	ERT_CPU_LEVEL_AMX = 5,        /* ... + AMX tiles (int8/bf16) */
} ert_cpu_level;

/* "auto", "scalar", "avx2", "avx512", "avx512vnni", "amx"; "unknown" otherwise. */
ERT_API const char *ert_cpu_level_name(ert_cpu_level level);

/*
 * The CPU kernel level a session created with ert_config.cpu_level =
 * @requested runs on this machine: the best the CPU and OS support, lowered to
 * @requested and to $ERT_CPU_ISA. ERT_CPU_LEVEL_AUTO is never stored. A level
 * above what the CPU supports fails with ERT_STATUS_UNSUPPORTED, a bad
 * ERT_CPU_ISA with ERT_STATUS_INVALID_ARGUMENT (message: ert_last_error()).
 */
ERT_API ert_status ert_cpu_level_resolve(ert_cpu_level requested, ert_cpu_level *out);

/*
 * One line describing the CPU for reports: vendor, model name, the best
 * level and the instruction-set features the kernels use. snprintf()
 * semantics: returns the length of the whole line, writes at most @size bytes.
 */
ERT_API size_t ert_cpu_describe(char *buf, size_t size);

typedef enum ert_level {
	ERT_LEVEL_NORMAL = 0,
	ERT_LEVEL_HIGH = 1,
	ERT_LEVEL_LOW = 2,
} ert_level;

/*
 * Autotuning of GPU kernels (ert_config.tune): work-group sizes, and the tile
 * variant where a kernel has several, chosen per kernel and shape while a
 * session is planned by timing the candidates on the device. With a cache
 * file (ert_config.cache_path) the choices are kept there and a later
 * session times nothing. The CPU backend does not tune.
 */
typedef enum ert_tune {
	ERT_TUNE_FAST = 0,   /* default: the built-in choice and a few others */
	ERT_TUNE_NONE = 1,   /* the built-in choices; nothing is timed */
	ERT_TUNE_NORMAL = 2, /* every work-group size of a kernel up to the device's limit */
	ERT_TUNE_WIDE = 3,   /* NORMAL's, smaller ones and the driver's own choice, timed longer */
} ert_tune;

/*
 * The fp16 overflow guard (ert_config.fp16_guard). With precision LOW, a GPU
 * backend that stores float16 (OpenCL on a GPU or with cl_khr_fp16) runs
 * ops in float16, except those the guard keeps in float32: while a plan is
 * made, the whole graph runs once on the CPU backend (a calibration run)
 * and every tensor's max |x| is recorded; an op whose float inputs or
 * outputs reach ert_config.fp16_bound, or are inf or NaN there, runs in
 * float32. `edgert run --explain` says which ops and why. The calibration
 * run costs one CPU inference each time a plan is made (each input shape).
 */
typedef enum ert_fp16_guard {
	/* on; the calibration inputs are the library's: float inputs uniform in
	 * [-1, 1) from a fixed seed (xorshift32, seed 0x2545F491, in input order),
	 * other inputs zero */
	ERT_FP16_GUARD_ON = 0,
	ERT_FP16_GUARD_OFF = 1,      /* off: every op the backend takes runs in float16 */
} ert_fp16_guard;

#define ERT_MAX_BACKENDS 4
#define ERT_MAX_THREADS 32
#define ERT_MAX_RANK 8
/* Most tensors a sequence value may hold (hostile models and inputs stop there). */
#define ERT_MAX_SEQUENCE_LENGTH (1u << 20)

/** Per-op callback information. Valid only during the callback. */
typedef struct ert_op_info {
	const char *name;    /* node name (never NULL; generated when the model has none) */
	const char *type;    /* op type, ONNX spelling ("Conv") */
	const char *backend; /* backend that runs it ("cpu") */
	uint32_t index;      /* position in the execution order */
	/*
	 * Added after 0.1. The kernel that runs it, as the backend names it
	 * ("f32-gemm-8x48-avx512" on the CPU; the kernel level "scalar", "avx2",
	 * ... where one kernel per level runs); NULL when the backend does not say.
	 */
	const char *kernel;
	/*
	 * Added after 0.1. 0 for an op of the session's graph; n for an op of a
	 * subgraph n levels down (an If branch, a Loop or Scan body, which run
	 * on the CPU as sessions of their own, docs/control-flow.md). For those,
	 * name is the enclosing nodes' names and the op's, joined by '/'
	 * ("loop/if_in_body/neg"), and index is the op's position in its
	 * subgraph's execution order, so it repeats the indices of the
	 * session's own ops: a callback that keys anything on index, or that
	 * calls ert_session_op_output(), should look only at depth 0 (the If,
	 * Loop or Scan op itself is reported at its own depth, after every op
	 * of its subgraphs has run).
	 */
	uint32_t depth;
	/*
	 * Added after depth. Non-zero when device_ns is the time the op ran on
	 * its device, as the device measured it (Vulkan timestamp queries,
	 * OpenCL profiling events): only in after_op callbacks of a session
	 * created with ert_config.device_times, for ops whose backend measures
	 * (GPU backends). Zero otherwise (CPU ops, ops that queued no device
	 * work, before_op callbacks): then time the op on the host, between
	 * before_op and after_op (its backend has finished the op when after_op
	 * is called).
	 */
	uint32_t device_timed;
	uint64_t device_ns;  /* nanoseconds; 0 unless device_timed */
} ert_op_info;

/**
 * Called before each op, the ops of If/Loop/Scan subgraphs included (each
 * time they run: once per iteration of a Loop or Scan; see
 * ert_op_info.depth). Return non-zero to skip the op (its outputs keep
 * whatever they held; in a subgraph, the run then fails where a later op
 * needs a shape the skipped op would have given). @user is
 * ert_config.callback_user.
 */
typedef int (*ert_before_op_fn)(const ert_op_info *op, void *user);
/**
 * Called after each op, the ops of If/Loop/Scan subgraphs included. Return
 * non-zero to stop the run: ert_session_run() returns ERT_STATUS_STOPPED,
 * and the outputs of ops that did not run hold undefined values (the memory
 * plan reuses their storage for other tensors). Stopped inside a subgraph,
 * the whole run stops there (the If, Loop or Scan and every enclosing one
 * end at once) and ert_session_error() names the ops, outermost first
 * ("failed to run Loop 'loop': body op If 'inner': then_branch: run stopped
 * after Neg 'neg'"). This is
 * how an application bounds a run: a Loop runs for as long as its trip
 * count and condition say.
 */
typedef int (*ert_after_op_fn)(const ert_op_info *op, void *user);

/**
 * Session configuration. Initialise with ert_config_init() and change fields;
 * ert_session_create() copies what it needs, so the struct may be reused.
 */
typedef struct ert_config {
	uint32_t struct_size;                       /* set by ert_config_init() */
	/*
	 * Tried in order for each op; backends absent from this system or build
	 * are skipped, and the CPU is always the last fallback. The per-op
	 * callbacks report which backend runs each op.
	 */
	ert_backend_type backends[ERT_MAX_BACKENDS];
	uint32_t num_backends;                      /* 0 means {CPU} */
	/*
	 * LOW allows backends reduced-precision kernels (the CPU: Conv, Gemm
	 * and MatMul in bf16 with fp32 sums where it has AVX512_BF16; see
	 * docs/cpu-kernels.md); HIGH forbids them.
	 */
	ert_level precision;
	/*
	 * Ops whose inputs are all constant for a plan are computed once while
	 * planning if their outputs fit a budget: 1 MiB for LOW, 64 MiB for
	 * NORMAL, 256 MiB for HIGH. With NORMAL and HIGH the CPU backend also
	 * keeps one packed copy of Conv, Gemm and MatMul weights per session
	 * (about the size of those weights, shared by every cached plan; four
	 * times the size for the 3x3 convolutions of up to 256 x 256 channels
	 * it runs as Winograd F(4x4, 3x3) at the AVX2 level and up); with
	 * LOW it keeps none and packs from the model's weights at every run.
	 * A model converted with block-quantised weights (edgert convert
	 * --weight-bits 8|4) keeps them quantised: with LOW, Conv, Gemm and
	 * MatMul read them so on the CPU and run int8 dot products on
	 * activations quantised as they run (per row and block of 32 along K;
	 * about 0.5 % of the output's magnitude from the float32 kernels on the
	 * same weights, docs/dynamic-quant.md); with NORMAL and HIGH they are
	 * decoded to float32 once for the model, when a session first needs
	 * them. LOW trades run time for memory.
	 */
	ert_level memory;
	/* With num_threads 0: LOW uses half the online CPUs, NORMAL/HIGH all. */
	ert_level power;
	uint32_t num_threads;  /* 1..32; 0 means chosen from the online CPUs (at most 32) */
	/*
	 * Optional file where backends with costly preparation (GPU pipelines)
	 * keep prepared kernels between runs; copied; may be NULL. The CPU
	 * backend prepares in memory and does not use it.
	 */
	const char *cache_path;
	int shape_mutable;     /* non-zero: inputs may be resized after creation */
	ert_before_op_fn before_op; /* optional */
	ert_after_op_fn after_op;   /* optional */
	void *callback_user;
	/*
	 * Fields below were added after 0.1; a config whose struct_size ends
	 * before one of them gets that field's default. ert_config_init() sets
	 * struct_size to the size this header was compiled with.
	 */
	/*
	 * Highest CPU kernel level the CPU backend may use (AUTO: the best this
	 * CPU has). The environment variable ERT_CPU_ISA (scalar, avx2, avx512,
	 * avx512vnni, amx) lowers it further. Asking for a level the CPU lacks
	 * fails session creation with ERT_STATUS_UNSUPPORTED.
	 */
	ert_cpu_level cpu_level;
	/*
	 * Memory budget in bytes: the most a session may hold for its input
	 * buffers (the whole pages of their current shapes) and its plans (the
	 * arenas of each memory plan, which hold every tensor the ops write and
	 * their workspaces, and the values computed while planning). Plans
	 * cached for other input shapes are dropped, least recently used first,
	 * to make room. 0, the default, means half the physical memory (sysconf
	 * _SC_PHYS_PAGES x _SC_PAGESIZE / 2; 2 GiB where that cannot be read);
	 * UINT64_MAX means no budget. Model weights used in place and the CPU's
	 * packed weights are not counted. docs/limits.md has the details.
	 *
	 * Sizes come from the model, so they are checked (overflow-checked, and
	 * against this budget) before anything of that size is allocated:
	 * ert_session_create() and ert_session_resize_input() check the inputs'
	 * shapes; planning checks every tensor shape inference gives, each value
	 * it computes and then the whole memory plan. Over the budget they fail
	 * with ERT_STATUS_OUT_OF_MEMORY (a size that overflows: ERT_STATUS_SHAPE)
	 * and a message naming the input or node and the sizes; a resize that
	 * fails keeps the input's shape. Input buffers of 1 MiB and more are
	 * mapped zero pages: memory is committed as the application writes them.
	 */
	uint64_t max_memory;
	/*
	 * Autotuning of GPU kernels while planning (enum ert_tune; FAST by
	 * default). Each kernel and shape is tuned once per session, or once
	 * per device, driver and kernel source when a cache file is set. A
	 * choice made by a wider mode serves a narrower one; a narrower one is
	 * tuned again by a wider mode. Values past ERT_TUNE_WIDE fail session
	 * creation with ERT_STATUS_INVALID_ARGUMENT.
	 */
	ert_tune tune;
	/*
	 * Added after tune. The fp16 overflow guard (see enum
	 * ert_fp16_guard; only with precision LOW on a backend storing float16)
	 * and its bound on max |x|: 0 means 2^14 (16384, a quarter of float16's
	 * largest value, 65504: room for what an op computes between its inputs
	 * and its outputs); at most 65504.
	 */
	ert_fp16_guard fp16_guard;
	float fp16_bound;
	/*
	 * Added after fp16_bound. Non-zero: backends that can time ops on their
	 * device do so, and every after_op callback of an op they ran says how
	 * long it ran there (ert_op_info.device_ns; what `edgert profile`
	 * shows). Each op then costs a little more (two timestamps written on
	 * the device, or profiling events), so leave it 0 (the default)
	 * outside profiling. Only after_op callbacks see the times.
	 */
	int device_times;
} ert_config;

/**
 * Fill @cfg with defaults (CPU backend, NORMAL levels, all cores, mutable
 * shapes). Does nothing when @cfg is NULL.
 */
ERT_API void ert_config_init(ert_config *cfg);

typedef struct ert_model ert_model;
typedef struct ert_session ert_session;
typedef struct ert_session_tensor ert_tensor;

/**
 * Load a model from a file: an .ert file is mapped (its weights are used in place,
 * never copied by loading), an .onnx file is imported and optimised in memory. On failure returns a status,
 * writes a message naming the problem into @err (if non-NULL), and leaves
 * *@model_out untouched. The caller owns the returned reference.
 */
ERT_API ert_status ert_model_load_file(const char *path, ert_model **model_out,
				       char *err, size_t err_size);

/*
 * The file of an .ert model is mapped, and its weights and constants are
 * read from the mapping while sessions run. Replace a model file that may be
 * loaded by writing the new file beside it and renaming it over the old one
 * (what `edgert convert -o` does): the old mapping keeps the old file's
 * bytes. Overwriting the file in place (as `cp new.ert old.ert` does) or
 * truncating it changes, or takes away, the pages under running sessions: a
 * run may then compute garbage or be killed by SIGBUS. When that cannot be
 * ruled out, load with ERT_MODEL_LOAD_COPY.
 */
/* Read the whole file into memory owned by the model instead of mapping it. */
#define ERT_MODEL_LOAD_COPY 0x1u

/**
 * ert_model_load_file() with @flags: 0 or ERT_MODEL_LOAD_COPY (the model
 * holds a private copy of the file, as large as the file, and the file may
 * then be changed or removed freely). Unknown flags fail with
 * ERT_STATUS_INVALID_ARGUMENT.
 */
ERT_API ert_status ert_model_load_file_flags(const char *path, uint32_t flags,
					     ert_model **model_out, char *err, size_t err_size);

/**
 * Load a model from memory. @data must stay valid and unchanged for the life of
 * the model (it is used in place, like a mapped file); pass @copy non-zero to have
 * the runtime keep its own copy instead.
 */
ERT_API ert_status ert_model_load_memory(const void *data, size_t size, int copy,
					 ert_model **model_out, char *err, size_t err_size);

ERT_API ert_model *ert_model_ref(ert_model *model);
/** Drop a reference; accepts NULL. The model is freed with its last reference. */
ERT_API void ert_model_unref(ert_model *model);

/** Number of graph inputs/outputs of a model. */
ERT_API uint32_t ert_model_input_count(const ert_model *model);
ERT_API uint32_t ert_model_output_count(const ert_model *model);
/** Name of input/output @index, or NULL when out of range. */
ERT_API const char *ert_model_input_name(const ert_model *model, uint32_t index);
ERT_API const char *ert_model_output_name(const ert_model *model, uint32_t index);

/**
 * Create a session and plan the model for its declared input shapes. Symbolic
 * dimensions read as 1 until ert_session_resize_input() sets them; models with
 * symbolic dimensions, or whose shapes depend on input values, are planned at
 * the first run instead (so planning errors then come from ert_session_run()).
 * On failure *@sess_out is untouched and ert_last_error() says why.
 */
ERT_API ert_status ert_session_create(ert_model *model, const ert_config *cfg,
				      ert_session **sess_out);
/** Accepts NULL. */
ERT_API void ert_session_destroy(ert_session *sess);

/** Message of the last failure on @sess ("" when none). Owned by the session. */
ERT_API const char *ert_session_error(const ert_session *sess);
/** Message of the last failure on this thread that had no object to hold it. */
ERT_API const char *ert_last_error(void);

ERT_API uint32_t ert_session_input_count(const ert_session *sess);
ERT_API uint32_t ert_session_output_count(const ert_session *sess);
/** Input/output by index or name; NULL when there is none. */
ERT_API ert_tensor *ert_session_get_input(ert_session *sess, uint32_t index);
ERT_API ert_tensor *ert_session_get_input_by_name(ert_session *sess, const char *name);
ERT_API const ert_tensor *ert_session_get_output(ert_session *sess, uint32_t index);
ERT_API const ert_tensor *ert_session_get_output_by_name(ert_session *sess, const char *name);

/**
 * Set a new shape for an input. Takes effect at the next run (which re-plans, or
 * reuses a cached plan for the same shapes). Fails with ERT_STATUS_SHAPE when the
 * model fixes that dimension to another value, or when the session was created
 * without shape_mutable.
 */
ERT_API ert_status ert_session_resize_input(ert_session *sess, uint32_t index,
					    uint32_t rank, const int64_t *dims);

/**
 * Copy @size bytes into input @index. @size must equal the input's byte size for
 * its current shape and @dtype its element type (ERT_STATUS_SHAPE / _DTYPE otherwise).
 * For a string input @data is an array of ert_string and the strings' bytes are
 * copied too (ERT_STATUS_INVALID_ARGUMENT for a NULL data with a non-zero len).
 */
ERT_API ert_status ert_session_set_input(ert_session *sess, uint32_t index, ert_dtype dtype,
					 const void *data, size_t size);

/**
 * One tensor of a sequence or optional value: dtype, shape and @size bytes at
 * @data. Given to ert_session_set_input_items() (copied there), or filled by
 * ert_tensor_get_item() (@data then points into the session, valid until the
 * next run, resize or set of that input, or until the session is destroyed).
 */
typedef struct ert_item {
	ert_dtype dtype;
	uint32_t rank;
	int64_t dims[ERT_MAX_RANK];
	const void *data;
	size_t size;
} ert_item;

/**
 * Set input @index, a sequence or optional (ert_tensor_kind()), to @count
 * tensors copied from @items. A sequence takes any number (0 included) of
 * tensors of its element dtype; an optional tensor takes 1 (present) or 0
 * (none); an optional sequence is none when @has_value is 0 (then @count
 * must be 0), else a sequence of @count tensors. @has_value is ignored for
 * the other kinds. ERT_STATUS_DTYPE on a tensor input or an item of another
 * dtype; ERT_STATUS_SHAPE on an item whose @size does not match its shape,
 * or more than ERT_MAX_SEQUENCE_LENGTH items.
 */
ERT_API ert_status ert_session_set_input_items(ert_session *sess, uint32_t index,
					       int has_value, uint32_t count,
					       const ert_item *items);

/** Run the plan. Re-plans first if an input was resized. */
ERT_API ert_status ert_session_run(ert_session *sess);

/**
 * Bytes of memory the session holds to run the current plan: its arenas (one
 * per buffer type that its ops use, each as large as the memory plan needs)
 * added up, the input buffers, and what backends hold outside the arenas, such
 * as the CPU's once-per-session packed copies of Conv/Gemm/MatMul weights (none
 * with memory ERT_LEVEL_LOW), and the tensors sequences and optionals hold. Model weights used in place from the mapped file, and
 * constants computed while planning, are not counted.
 */
ERT_API size_t ert_session_peak_bytes(const ert_session *sess);

/**
 * Bytes the last successful run copied between backends' memories, as the
 * backends report them (host memory and device buffers, say). Tensors that
 * cross between the CPU and the NPU live in buffers both address in place
 * (the NPU's mapped buffers, the session's page-aligned input buffers), so
 * with the CPU and NPU backends this is 0. A tensor that crosses into or out
 * of memory the CPU cannot map (a GPU's, with the OpenCL backend) is copied
 * once per run at that split and counted here, and so are graph outputs that
 * a GPU writes, read back to host memory at the end of the run (so their
 * data is meaningful once the run has returned, not in after_op callbacks).
 */
ERT_API uint64_t ert_session_copied_bytes(const ert_session *sess);

/** Tensor accessors. Shapes are those of the current plan. */
ERT_API const char *ert_tensor_name(const ert_tensor *t);
ERT_API ert_dtype ert_tensor_dtype(const ert_tensor *t);
ERT_API uint32_t ert_tensor_rank(const ert_tensor *t);
/** Dimension @axis (0..rank-1); -1 when out of range. */
ERT_API int64_t ert_tensor_dim(const ert_tensor *t, uint32_t axis);
ERT_API ert_layout ert_tensor_layout(const ert_tensor *t);
ERT_API size_t ert_tensor_element_count(const ert_tensor *t);
ERT_API size_t ert_tensor_byte_size(const ert_tensor *t);
/** Kind of value an input or output holds (ERT_VALUE_TENSOR for most). */
ERT_API ert_value_kind ert_tensor_kind(const ert_tensor *t);
/**
 * Element dtype of a sequence or optional input or output (its tensors'),
 * as the model declares it or its last value has it; a tensor's dtype for a
 * tensor.
 */
ERT_API ert_dtype ert_tensor_item_dtype(const ert_tensor *t);
/**
 * Tensors a sequence or optional holds now: an output after a run, an input
 * once set: a sequence's length, 0 or 1 for an optional (0: none). -1 for a
 * tensor, or an output before a run.
 */
ERT_API int64_t ert_tensor_item_count(const ert_tensor *t);
/**
 * Does an optional hold a value? 1 or 0; a sequence or tensor always does
 * (1), an output before a run does not (0).
 */
ERT_API int ert_tensor_has_value(const ert_tensor *t);
/**
 * Tensor @i (0..item_count - 1) of a sequence or optional into *@item_out
 * (its data points into the session, see ert_item). ERT_STATUS_NOT_FOUND
 * when @i is out of range or @t holds no value.
 */
ERT_API ert_status ert_tensor_get_item(const ert_tensor *t, uint32_t i, ert_item *item_out);

/**
 * Host pointer to the tensor's data for its current shape: writable for inputs.
 * Valid until the next resize or run that re-plans, or until the session is destroyed.
 */
ERT_API void *ert_tensor_data(const ert_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* EDGERT_H */
