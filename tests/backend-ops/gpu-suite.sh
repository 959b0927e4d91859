# What both GPU suites (tests/suites/37-opencl.sh, 38-vulkan.sh) do alike,
# sourced by them after they define ok, bad and the counts p, f and s (and
# $edgert and $out, which zoo() uses).

# tally LOG LABEL RC [MORE]: add the "N passed, N failed, N skipped" summary
# of a test program's LOG to ours, or count one failure where it crashed or
# exited RC without one (MORE: another file to show then, its stderr)
tally() {
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$1" | tail -n 1)
	if [ -z "$line" ] || { [ "$3" -ne 0 ] && ! echo "$line" | grep -q ' [1-9][0-9]* failed'; }; then
		tail -n 5 "$1" ${4:+"$4"}
		bad "$2 crashed or exited $3 without a summary"
	else
		p=$((p + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
		f=$((f + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
		s=$((s + $(echo "$line" | sed -E 's/.* ([0-9]+) skipped/\1/')))
		echo "# $2: $line"
	fi
}

# max |got - ref| <= 1e-3 x max |ref| over every output, no NaN or inf in got
compare() { # refdir gotdir
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import glob, os, sys
import numpy as np
ref_dir, got_dir = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(ref_dir, "*.npy")))
if not files:
    sys.exit("no outputs in " + ref_dir)
for f in files:
    r = np.load(f).astype(np.float64)
    g = np.load(os.path.join(got_dir, os.path.basename(f))).astype(np.float64)
    if r.shape != g.shape:
        sys.exit("%s: shape %s, reference %s" % (os.path.basename(f), g.shape, r.shape))
    if not np.isfinite(g).all():
        sys.exit("%s: %d values are NaN or inf" % (os.path.basename(f), (~np.isfinite(g)).sum()))
    err, top = np.abs(g - r).max(), np.abs(r).max()
    print("%s: max abs error %.3g, max |ref| %.3g" % (os.path.basename(f), err, top))
    if err > 1e-3 * top:
        sys.exit("%s: error over 1e-3 x max |ref|" % os.path.basename(f))
EOF
}

# zoo BACKEND NAME TAG CHECK MODEL...: each model (edgert zoo into
# $out/MODEL.ert, again when edgert is newer) run with --seed 5 on the CPU and
# on BACKEND (NAME in the messages, its outputs in $out/MODEL-TAG) with
# --explain: all ops in one BACKEND split, CHECK MODEL LOG (the backend's own
# checks of the --explain log; : for none), and the outputs within
# compare()'s bound of the CPU's; one check where a model does not run
zoo() {
	zoo_be=$1 zoo_name=$2 zoo_tag=$3 zoo_check=$4
	shift 4
	for m in "$@"; do
		if [ ! -f "$out/$m.ert" ] || [ "$edgert" -nt "$out/$m.ert" ]; then
			"$edgert" zoo "$m" -o "$out/$m.ert" >"$out/$m-zoo.log" 2>&1 || {
				tail -n 3 "$out/$m-zoo.log"; bad "$m built by edgert zoo"; continue; }
		fi
		rm -rf "$out/$m-cpu" "$out/$m-$zoo_tag"
		"$edgert" run "$out/$m.ert" --backend cpu --seed 5 -o "$out/$m-cpu" >"$out/$m-cpu.log" 2>&1
		if ! "$edgert" run "$out/$m.ert" --backend "$zoo_be" --seed 5 -o "$out/$m-$zoo_tag" \
			--explain >"$out/$m-$zoo_tag.log" 2>&1; then
			tail -n 3 "$out/$m-$zoo_tag.log"
			bad "$m runs on $zoo_name"
			continue
		fi
		# a GPU session plans a fused model's inverted-residual blocks as
		# their three Convs (session.c), so it may hold more ops than the
		# model's nodes, never fewer; all of them in one split, no crossing
		n=$("$edgert" info "$out/$m.ert" | sed -n 's/^ops *\([0-9]*\) nodes.*/\1/p')
		sn=$(sed -n 's/^\([0-9]*\) ops in 1 split; 0 crossings.*/\1/p' "$out/$m-$zoo_tag.log")
		if [ "$(grep -c '^split ' "$out/$m-$zoo_tag.log")" -eq 1 ] &&
		   grep -q "^split 1: $zoo_be" "$out/$m-$zoo_tag.log" &&
		   [ -n "$sn" ] && [ -n "$n" ] && [ "$sn" -ge "$n" ]; then
			ok "$m: --explain shows all $sn ops in one $zoo_name split"
		else
			grep -E '^split|ops in' "$out/$m-$zoo_tag.log" | sed 's/^/# /'
			bad "$m: --explain shows all ops in one $zoo_name split"
		fi
		"$zoo_check" "$m" "$out/$m-$zoo_tag.log"
		if compare "$out/$m-cpu" "$out/$m-$zoo_tag" >"$out/$m-cmp.log" 2>&1; then
			ok "$m: $zoo_name output matches the CPU backend ($(head -n 1 "$out/$m-cmp.log"))"
		else
			sed 's/^/# /' "$out/$m-cmp.log" | tail -n 3
			bad "$m: $zoo_name output within 1e-3 x max |ref| of the CPU backend, no NaN"
		fi
	done
}
