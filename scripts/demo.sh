#!/bin/sh
# The main job on the default CPU backend: build MobileNetV2 with random
# weights, describe it, run it once (top-5), benchmark it and profile it.
# Called by `make demo` with ERT_BUILD set, after the build.
set -eu
: "${ERT_BUILD:=build}"
: "${ERT_DEMO_DIR:=$ERT_BUILD/demo}"
E="$ERT_BUILD/edgert"
model="$ERT_DEMO_DIR/mobilenet_v2.ert"

heading() {
	printf '\n== %s\n' "$1"
}

[ -x "$E" ] || { echo "demo: $E is not built (run make first)" >&2; exit 1; }
mkdir -p "$ERT_DEMO_DIR"

heading "build mobilenet_v2 with seeded random weights (edgert zoo)"
"$E" zoo mobilenet_v2 -o "$model"

heading "describe it (edgert info)"
"$E" info "$model"

heading "run it once on a random input, outputs to $ERT_DEMO_DIR/out (edgert run)"
"$E" run "$model" -o "$ERT_DEMO_DIR/out"

heading "benchmark it (edgert bench)"
"$E" bench "$model" --warmup 3 --loops 20

heading "profile it per op, slowest first (edgert profile)"
"$E" profile "$model" --loops 5 --top 15

printf '\ndemo done: model and outputs in %s\n' "$ERT_DEMO_DIR"
