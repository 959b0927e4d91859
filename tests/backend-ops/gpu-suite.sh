# What both GPU suites (tests/suites/37-opencl.sh, 38-vulkan.sh) do alike,
# sourced by them after they define ok, bad and the counts p, f and s.

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
