#!/bin/sh
# The GPU benchmark (issue 9): edgert's OpenCL backend against PyTorch+cuDNN
# eager on the same GPU, in the same run. Meant for the NVIDIA machine the
# device runner lends (an H100, python3 with torch, torchvision and cuDNN,
# no network), run from the repository root with the build packed here by
# scripts/gpu-bench-pack.sh in .devrun/ (carry [".devrun"]).
#
# What it does, each step checked:
#  1. .devrun/bin/edgert and .devrun/lib/ (LD_LIBRARY_PATH) resolve;
#  2. an OpenCL vendors directory of its own whose nvidia.icd names NVIDIA's
#     OpenCL library (the machine's /etc/OpenCL/vendors has only pocl.icd;
#     $NVIDIA_OPENCL_LIB overrides the search), used through OCL_ICD_VENDORS;
#  3. the zoo (mobilenet_v2 resnet18 resnet50 vit_s16) built by `edgert zoo`
#     at batch 1 and 8; every op must run on the GPU (--explain);
#  4. session creation with the cache file, each broken down by phase
#     (edgert bench's create_phases): cold (a fresh process, no file:
#     programs built, launches tuned) and a second session in that process
#     (--sessions 2: the context and programs shared, the file warm); a
#     fresh process with the warm file (driver start-up and NVIDIA's JIT of
#     the binaries included), NVIDIA's own compute cache off
#     (CUDA_CACHE_DISABLE) and then on (a private CUDA_CACHE_PATH, filled
#     by a first run); and --tune none without a file;
#  5. `edgert bench --backend opencl` per model, batch and precision
#     (normal = fp32, low = fp16 where the backend has it);
#  6. scripts/gpu-bench-torch.py: torchvision's models, fp32 and fp16;
#  7. a table with the ratios and the issue's targets, in OUT/table.md.
#
# USAGE: sh scripts/gpu-bench.sh [--out DIR] [--models LIST] [--batches LIST]
#            [--work DIR] [--loops N] [--warmup N] [--tune MODE] [--no-torch] [--no-low]
#            [--any-device]
#   --out DIR       results: table.md, the figures, logs/ (default
#                   /tmp/gpu-bench; on the runner, "$OUT/gpu-bench")
#   --work DIR      models and cache files, large (default /tmp/gpu-bench-work)
#   --models LIST   comma-separated zoo names (default all four)
#   --batches LIST  comma-separated batch sizes (default 1,8)
#   --loops N       timed runs per figure (default 50), after --warmup N (10)
#   --tune MODE     edgert's --tune (default fast)
#   --any-device    keep the system's OpenCL vendors and take whatever device
#                   edgert opens (to try the script on PoCL; not a benchmark)
# Exit status 0 when every figure was measured, 1 otherwise (the table still
# shows what was). Takes about 3-5 minutes on the H100 machine.
set -u

out=/tmp/gpu-bench work=/tmp/gpu-bench-work models=mobilenet_v2,resnet18,resnet50,vit_s16 batches=1,8
loops=50 warmup=10 tune=fast torch=1 low=1 any=0
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift ;;
	--work) work=$2; shift ;;
	--models) models=$2; shift ;;
	--batches) batches=$2; shift ;;
	--loops) loops=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--tune) tune=$2; shift ;;
	--no-torch) torch=0 ;;
	--no-low) low=0 ;;
	--any-device) any=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu-bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	[ $# -gt 0 ] && shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
carry=$root/.devrun
edgert=$carry/bin/edgert
failures=0
t_start=$(date +%s)

say() { echo "gpu-bench: $*"; }
die() { echo "gpu-bench: error: $*" >&2; exit 1; }
failed() { echo "gpu-bench: FAILED: $*" >&2; failures=$((failures + 1)); }
phase() { say "[$(( $(date +%s) - t_start )) s] $*"; }

# ---- 1. the carried build ----
[ -x "$edgert" ] || die "$edgert is missing: run 'sh scripts/gpu-bench-pack.sh' on the build machine and carry .devrun"
[ -d "$carry/lib" ] || die "$carry/lib is missing (re-run scripts/gpu-bench-pack.sh)"
export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if command -v ldd >/dev/null; then
	nf=$(ldd "$edgert" 2>&1 | awk '/not found/ { print $1 }')
	[ -z "$nf" ] || die "libraries not found for edgert: $nf (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
fi
"$edgert" --help >/dev/null 2>&1 || die "$edgert does not start here: $("$edgert" --help 2>&1 | head -n 2)"
mkdir -p "$work/models" "$out/logs" "$work/icd" || die "cannot create $out or $work"
[ -f "$carry/MANIFEST" ] && sed 's/^/# /' "$carry/MANIFEST" | head -n 2

# ---- 2. NVIDIA's OpenCL driver through a vendors directory of our own ----
find_nvidia_cl() {
	if [ -n "${NVIDIA_OPENCL_LIB:-}" ]; then
		echo "$NVIDIA_OPENCL_LIB"
		return
	fi
	for f in /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 /usr/lib64/libnvidia-opencl.so.1 \
		 /usr/lib/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so \
		 /usr/lib64/libnvidia-opencl.so /usr/lib/libnvidia-opencl.so; do
		[ -e "$f" ] && { echo "$f"; return; }
	done
	ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so/ { print $NF; exit }' | grep . && return
	find /usr /lib /lib64 /opt -maxdepth 5 -name 'libnvidia-opencl.so*' 2>/dev/null | head -n 1
}
if [ "$any" = 0 ]; then
	nvcl=$(find_nvidia_cl)
	if [ -z "$nvcl" ] || [ ! -e "$nvcl" ]; then
		die "NVIDIA's OpenCL library (libnvidia-opencl.so*) was not found; set NVIDIA_OPENCL_LIB=/path/to/it"
	fi
	echo "$nvcl" >"$work/icd/nvidia.icd" || die "cannot write $work/icd/nvidia.icd"
	export OCL_ICD_VENDORS="$work/icd"
	say "OpenCL: $nvcl through OCL_ICD_VENDORS=$OCL_ICD_VENDORS"
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm \
	--format=csv,noheader 2>/dev/null | sed 's/^/# GPU: /'

# ---- 3. the models, and every op on the GPU ----
phase "building the zoo models ($models, batch $batches)"
list() { echo "$1" | tr ',' ' '; }
for m in $(list "$models"); do
	for b in $(list "$batches"); do
		f=$work/models/$m-b$b.ert
		[ -f "$f" ] && [ "$f" -nt "$edgert" ] && continue
		"$edgert" zoo "$m" --batch "$b" -o "$f" >"$out/logs/zoo-$m-b$b.log" 2>&1 ||
			{ failed "edgert zoo $m --batch $b: $(tail -n 1 "$out/logs/zoo-$m-b$b.log")"; rm -f "$f"; }
	done
done
device=
for m in $(list "$models"); do
	b=$(list "$batches" | cut -d' ' -f1)
	f=$work/models/$m-b$b.ert
	[ -f "$f" ] || continue
	log=$out/logs/explain-$m.log
	if ! "$edgert" run "$f" --backend opencl --tune none --explain >"$log" 2>&1; then
		failed "edgert run $m --backend opencl: $(grep -m1 -i 'error\|fail' "$log")"
		continue
	fi
	dev=$(sed -n 's/^opencl device: //p' "$log")
	[ -n "$dev" ] || { failed "$m: edgert did not open an OpenCL device ($(tail -n 1 "$log"))"; continue; }
	device=$dev
	case "$any:$dev" in
	0:*pthread*|0:*[Pp]o[Cc][Ll]*|0:*cpu*) die "the OpenCL device is '$dev', not the GPU: check $OCL_ICD_VENDORS/nvidia.icd" ;;
	esac
	if grep -q '^split 2' "$log" || ! grep -q '^split 1: opencl' "$log"; then
		say "warning: $m: not every op runs on OpenCL: $(grep -c '^split ' "$log") splits (see $log)"
	fi
done
[ -n "$device" ] || die "no model ran on OpenCL; logs in $out/logs"
say "OpenCL device: $device"

json() { # FILE KEY
	sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1" | head -n 1
}

# ---- 4. session creation with the cache file, by phase ----
# create-M-RUN.json: cold (fresh process, no file; --sessions 2, so its
# create_next_* are the second session in that process), fresh (a fresh
# process, the file warm, NVIDIA's cache off), nvwarm (the same with NVIDIA's
# compute cache on and filled by nvfill), none (--tune none, no file)
phase "session creation: cold, second in the process, fresh process with the warm file"
b1=$(list "$batches" | cut -d' ' -f1)
for m in $(list "$models"); do
	f=$work/models/$m-b$b1.ert
	[ -f "$f" ] || continue
	cache=$work/create-$m.cache
	nvcache=$work/nvcache-$m
	rm -rf "$cache" "$nvcache"
	for run in cold fresh nvfill nvwarm none; do
		set -- --cache "$cache" --tune "$tune"
		case $run in
		cold) set -- "$@" --sessions 2 ;;
		none) set -- --tune none ;;
		esac
		nvoff=1
		case $run in nv*) nvoff=0 ;; esac
		CUDA_CACHE_DISABLE=$nvoff CUDA_CACHE_PATH=$nvcache "$edgert" bench "$f" --backend opencl "$@" --loops 1 --warmup 0 --json \
			>"$out/logs/create-$m-$run.json" 2>"$out/logs/create-$m-$run.log" ||
			failed "$m: session creation ($run): $(tail -n 1 "$out/logs/create-$m-$run.log")"
	done
	stat -c %s "$cache" >"$out/logs/create-$m-cache-bytes" 2>/dev/null || echo 0 >"$out/logs/create-$m-cache-bytes"
done

# ---- 5. edgert bench ----
phase "edgert bench --backend opencl (loops $loops, warm-up $warmup, tune $tune)"
: >"$out/edgert.txt"
precisions=normal
[ "$low" = 1 ] && precisions="normal low"
for m in $(list "$models"); do
	for b in $(list "$batches"); do
		f=$work/models/$m-b$b.ert
		[ -f "$f" ] || continue
		for p in $precisions; do
			j=$out/logs/bench-$m-b$b-$p.json
			# the cache file of step 4 keeps this model's programs and tuned launches
			if "$edgert" bench "$f" --backend opencl --precision "$p" --tune "$tune" \
				--cache "$work/bench.cache" --loops "$loops" --warmup "$warmup" --json \
				>"$j" 2>"$out/logs/bench-$m-b$b-$p.log"; then
				echo "$m $b $p $(json "$j" min_ms) $(json "$j" median_ms) $(json "$j" create_ms)" >>"$out/edgert.txt"
			else
				failed "edgert bench $m batch $b --precision $p: $(tail -n 1 "$out/logs/bench-$m-b$b-$p.log")"
			fi
		done
	done
done

# ---- 6. PyTorch + cuDNN ----
: >"$out/torch.jsonl"
if [ "$torch" = 1 ]; then
	phase "PyTorch eager + cuDNN (fp32, fp16)"
	py=$(command -v python3) || die "python3 is missing (use --no-torch to skip PyTorch)"
	if "$py" "$root/scripts/gpu-bench-torch.py" --models "$models" --batches "$batches" \
		--loops "$loops" --warmup "$warmup" >"$out/torch.jsonl" 2>"$out/logs/torch.log"; then
		:
	else
		rc=$?
		failed "PyTorch benchmark exited $rc: $(tail -n 2 "$out/logs/torch.log" | tr '\n' ' ')"
	fi
fi

# ---- 7. the table ----
phase "table"
python3 - "$out" "$device" "$tune" "$loops" "$models" <<'EOF' | tee "$out/table.md" || failed "the table could not be made"
import json, os, sys
out, device, tune, loops, models = sys.argv[1:6]
ed, th, env = {}, {}, {}
for line in open(os.path.join(out, "edgert.txt")):
    m, b, p, lo, med, cr = (line.split() + [""] * 6)[:6]
    if lo:
        ed[(m, int(b), p)] = (float(lo), float(med))
for line in open(os.path.join(out, "torch.jsonl")):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if "env" in j:
        env = j["env"]
    else:
        th[(j["model"], j["batch"], j["dtype"])] = (j["min_ms"], j["median_ms"])
def f(v):
    return "%.3f" % v if v is not None else "-"
def r(a, b):
    return "%.2fx" % (a / b) if a is not None and b else "-"
def get(d, k, i=0):
    return d[k][i] if k in d else None
print("GPU benchmark: edgert %s (OpenCL, tune %s) against PyTorch %s + cuDNN %s eager (%s)" %
      (device, tune, env.get("torch", "?"), env.get("cudnn", "?"), env.get("gpu", "?")))
print("min of %s runs, ms per run (input copied in, logits out); ratio = edgert / PyTorch "
      "(below 1: edgert faster)\n" % loops)
print("| model | batch | edgert fp32 | edgert LOW | torch fp32 | torch fp16 | fp32 ratio | LOW/fp16 ratio | LOW speed-up |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
keys = sorted({(m, b) for (m, b, _) in ed} | {(m, b) for (m, b, _) in th},
              key=lambda k: (["mobilenet_v2", "resnet18", "resnet50", "vit_s16"].index(k[0])
                             if k[0] in ["mobilenet_v2", "resnet18", "resnet50", "vit_s16"] else 9, k[1]))
for m, b in keys:
    e32, elo = get(ed, (m, b, "normal")), get(ed, (m, b, "low"))
    t32, t16 = get(th, (m, b, "fp32")), get(th, (m, b, "fp16"))
    print("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
        m, b, f(e32), f(elo), f(t32), f(t16), r(e32, t32), r(elo, t16),
        r(e32, elo)))
print()
def load(m, run):
    try:
        with open(os.path.join(out, "logs", "create-%s-%s.json" % (m, run))) as fp:
            return json.load(fp)
    except (OSError, ValueError):
        return None
rows = []
for m in models.split(","):
    cold, fresh, nvwarm, none = (load(m, r) for r in ("cold", "fresh", "nvwarm", "none"))
    if not cold:
        continue
    second = None
    if cold.get("create_next_ms"):
        second = {"create_ms": cold["create_next_ms"][0], "create_phases": cold["create_next_phases"][0]}
    try:
        size = open(os.path.join(out, "logs", "create-%s-cache-bytes" % m)).read().strip()
    except OSError:
        size = "-"
    rows.append((m, cold, second, fresh, nvwarm, none, size))
def ms(j):
    return j["create_ms"] if j else None
def fms(v):
    return "%.0f ms" % v if v is not None else "-"
if rows:
    print("Session creation (create_ms, one per process unless said): cold = a fresh process, no cache file "
          "(programs built, launches tuned); second = a second session of that process, the first still open "
          "(context and programs shared, the file warm); fresh = a fresh process with the warm file, NVIDIA's "
          "compute cache off (driver start-up and the driver's compile of the binaries included); "
          "+ driver cache = the same with NVIDIA's compute cache on and warm; none = --tune none without a file\n")
    print("| model | cold | second | cold / second | fresh | cold / fresh | fresh + driver cache | cold / that | tune none, no file | cache file bytes |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for m, cold, second, fresh, nvwarm, none, size in rows:
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            m, fms(ms(cold)), fms(ms(second)), r(ms(cold), ms(second)), fms(ms(fresh)),
            r(ms(cold), ms(fresh)), fms(ms(nvwarm)), r(ms(cold), ms(nvwarm)), fms(ms(none)), size))
    print()
    names = ["device", "cache", "programs", "kernels", "tuning", "uploads", "calibration", "memory", "planning"]
    print("Where session creation goes (ms, edgert bench's create_phases; planning = the rest: shapes, "
          "folding, placement, kernel arguments; programs: loaded/built/shared)\n")
    print("| model | run | total | " + " | ".join(names) + " | programs l/b/s | launches timed/reused |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in names) + " | --- | --- |")
    for m, cold, second, fresh, nvwarm, none, size in rows:
        for run, j in (("cold", cold), ("second", second), ("fresh", fresh), ("fresh + driver cache", nvwarm)):
            if not j or "create_phases" not in j:
                continue
            p = j["create_phases"]
            print("| %s | %s | %.0f | %s | %u/%u/%u | %u/%u |" % (
                m, run, j["create_ms"], " | ".join("%.1f" % p.get(n + "_ms", 0) for n in names),
                p["programs_loaded"], p["programs_built"], p["programs_shared"],
                p["launches_timed"], p["launches_reused"]))
    print()
def target(name, got, goal, better_low=True):
    if got is None:
        print("- %s: not measured" % name)
    else:
        ok = got <= goal if better_low else got >= goal
        print("- %s: %.2fx (goal %s%.1fx): %s" % (name, got, "<= " if better_low else ">= ", goal,
                                                   "met" if ok else "NOT met"))
def ratio(a, b):
    return a / b if a is not None and b else None
print("Targets (issue 9):")
target("resnet50 batch 1 fp32 within 2x of PyTorch", ratio(get(ed, ("resnet50", 1, "normal")), get(th, ("resnet50", 1, "fp32"))), 2.0)
target("mobilenet_v2 batch 1 fp32 within 1.5x of PyTorch", ratio(get(ed, ("mobilenet_v2", 1, "normal")), get(th, ("mobilenet_v2", 1, "fp32"))), 1.5)
target("resnet50 batch 1 LOW faster than fp32", ratio(get(ed, ("resnet50", 1, "normal")), get(ed, ("resnet50", 1, "low"))), 1.5, False)
for m, cold, second, fresh, nvwarm, none, size in rows:
    target("%s second session (warm cache) created faster than the first (cold)" % m,
           ratio(ms(cold), ms(second)), 5.0, False)
for m, cold, second, fresh, nvwarm, none, size in rows:
    target("%s fresh process with the warm cache file vs cold (NVIDIA's cache off; not the issue's wording)" % m,
           ratio(ms(cold), ms(fresh)), 5.0, False)
EOF

phase "done: $failures failure(s); results in $out (table.md, logs/)"
[ "$failures" -eq 0 ]
