# Sourced by scripts/gpu-check-*.sh with their arguments, after they set
# $check (their name): the build folder ($1, default build), a scratch
# folder $out, PASS/FAIL lines counted in $fails, and the comparison of
# outputs with the CPU backend's. Needs numpy in $PYTHON (default python3).
set -u
b=${1:-build}
edgert=$b/edgert
out=${TMPDIR:-/tmp}/gpu-check-$check.$$
mkdir -p "$out"
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# npy_cmp MODE DIR_REF DIR_GOT: for every .npy, no inf/NaN and
#   cosine: cosine >= 0.999 (max abs error printed);
#   abs:    max abs error <= 1e-3 x max |ref|
npy_cmp() {
	"${PYTHON:-python3}" - "$@" <<'PY'
import glob, os, sys
import numpy as np
mode = sys.argv[1]
for f in sorted(glob.glob(os.path.join(sys.argv[2], "*.npy"))):
    r = np.load(f).astype(np.float64).ravel()
    g = np.load(os.path.join(sys.argv[3], os.path.basename(f))).astype(np.float64).ravel()
    bad = (~np.isfinite(g)).sum()
    err = np.abs(g - r).max() if not bad else float("inf")
    if mode == "cosine":
        cos = float(g @ r / (np.linalg.norm(g) * np.linalg.norm(r) + 1e-30)) if not bad else 0.0
        print("%s: cosine %.6f, %d inf/NaN, max abs error %.3g, max |ref| %.3g" %
              (os.path.basename(f), cos, bad, err, np.abs(r).max()))
        failed = cos < 0.999
    else:
        print("%s: max abs error %.3g, max |ref| %.3g, %d inf/NaN" %
              (os.path.basename(f), err, np.abs(r).max(), bad))
        failed = err > 1e-3 * np.abs(r).max()
    if bad or failed:
        sys.exit(1)
PY
}
