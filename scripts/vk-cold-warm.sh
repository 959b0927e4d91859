#!/bin/sh
# vk-cold-warm.sh [BUILD_DIR] [MODELS] [TUNES]: cold vs warm session creation
# on the Vulkan backend with the cache file (docs/vulkan.md, "Cold and warm
# session creation"), from edgert bench's create_phases. Per model and
# tuning mode (TUNES, default "fast none"; on a CPU device such as lavapipe
# fast times nothing and "normal" is the mode that does), a fresh process without the file (cold: every
# pipeline built, every tunable launch timed), then a fresh process with
# the file it wrote (warm: the driver's pipeline cache and the tuned
# choices read back); --sessions 2 on the cold run adds a second session
# of that process. One markdown row per run: total, then the phases in ms
# (device, cache, programs = pipelines, tuning, uploads, planning), the
# pipelines built and launches timed / reused.
# MODELS: zoo names (default mobilenet_v2); the .ert files are made with
# edgert zoo under $TMPDIR. On NVIDIA, set __GL_SHADER_DISK_CACHE=0 to keep
# the driver's own shader cache out of the cold figure (and run again
# without it to see what that cache gives).
set -u
b=${1:-build}
models=${2:-mobilenet_v2}
tunes=${3:-fast none}
edgert=$b/edgert
work=${TMPDIR:-/tmp}/vk-cold-warm.$$
mkdir -p "$work"
export ERT_NO_PROGRESS=1
echo "| model | tune | run | total | device | cache | pipelines | tuning | uploads | planning | pipelines built | launches timed / reused |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for m in $models; do
	"$edgert" zoo "$m" -o "$work/$m.ert" >"$work/zoo.log" 2>&1 || { echo "# $m: edgert zoo failed"; continue; }
	for tune in $tunes; do
		rm -f "$work/$m-$tune.cache"
		for run in cold warm; do
			set -- --cache "$work/$m-$tune.cache" --tune "$tune" --loops 1 --warmup 0 --json
			[ "$run" = cold ] && set -- "$@" --sessions 2
			if ! "$edgert" bench "$work/$m.ert" --backend vulkan "$@" >"$work/$run.json" 2>"$work/$run.err"; then
				echo "# $m $tune $run: edgert bench failed: $(tail -n 1 "$work/$run.err")"
				continue
			fi
			"${PYTHON:-python3}" - "$work/$run.json" "$m" "$tune" "$run" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = [(sys.argv[4] + ", fresh process", j["create_phases"])]
for p in j.get("create_next_phases") or []:
    rows.append(("second session of that process", p))
for run, p in rows:
    print("| %s | %s | %s | %.0f ms | %.0f | %.1f | %.0f | %.0f | %.0f | %.0f | %d | %d / %d |" % (
        sys.argv[2], sys.argv[3], run, p["total_ms"], p["device_ms"], p["cache_ms"], p["programs_ms"],
        p["tuning_ms"], p["uploads_ms"], p["planning_ms"], p["programs_built"], p["launches_timed"],
        p["launches_reused"]))
PY
		done
	done
done
rm -rf "$work"
