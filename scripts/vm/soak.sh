#!/bin/sh
# A long run of the enpu random-ioctl fuzzer, then of the stress test, in
# the same QEMU VM as the kernel suite (issue 13): Debian's 6.12 kernel,
# 1 GiB of RAM, two vCPUs. One after the other: each checks device-wide
# counters (jobs submitted, BOs alive) that the other would move.
#
#   sh scripts/vm/soak.sh [seconds] [seed]
#
# seconds: how long each program runs (default 1800); seed: the fuzzer's
# seed (default "random": the program picks one and prints it). Builds the
# module and the selftests into $ERT_BUILD/soak (default build/soak).
#
# Fails on a program that did not exit 0, a kernel WARNING/BUG/Oops, a
# failed rmmod, or a VM that did not reach its end marker. The log is
# $ERT_BUILD/soak/console.txt; the seed is in it ("...random_ioctls:seed N").
set -u

secs=${1:-1800} seed=${2:-random}
case $secs in '' | *[!0-9]*) echo "soak: seconds must be a number, not '$secs'" >&2; exit 2 ;; esac
: "${ERT_BUILD:=build}"
out=$(pwd)/$ERT_BUILD/soak
kdir=$(ls -d /usr/src/linux-headers-6.12*-amd64 2>/dev/null | sort -V | tail -n 1)
kver=${kdir#/usr/src/linux-headers-}
if [ -z "$kdir" ] || [ ! -r "/boot/vmlinuz-$kver" ]; then
	echo "soak: Debian's linux-headers/linux-image 6.12 are not installed (scripts/install-deps.sh)" >&2
	exit 2
fi

rm -rf "$out"
mkdir -p "$out/src" "$out/tests"
cp -r Kbuild kmod uapi "$out/src/"
make -s -C "$kdir" M="$out/src" modules >"$out/modules.log" 2>&1 ||
	{ tail -n 20 "$out/modules.log" >&2; echo "soak: the module does not build" >&2; exit 1; }
make -s -C selftests OUTPUT="$out/selftests" >"$out/selftests.log" 2>&1 ||
	{ tail -n 20 "$out/selftests.log" >&2; echo "soak: the selftests do not build" >&2; exit 1; }
cp "$out/selftests/enpu_fuzz_test" "$out/selftests/enpu_stress_test" "$out/tests/"
cat >"$out/tests/env" <<EOF
export ENPU_FUZZ_SEED=$seed ENPU_FUZZ_SECONDS=$secs ENPU_FUZZ_WORKERS=4
export ENPU_STRESS_SECONDS=$secs
EOF
# test_hooks=0: nothing can hang a job on purpose, as on a user's machine
sh scripts/vm/mkinitramfs.sh "$kver" "$out/src/kmod/enpu.ko" "$out/tests" \
	"$out/initramfs.cpio.gz" "cores=2 job_timeout_ms=500 test_hooks=0" >"$out/mkinitramfs.log" 2>&1 ||
	{ cat "$out/mkinitramfs.log" >&2; exit 1; }

echo "soak: $secs s of enpu_fuzz_test (seed $seed), then $secs s of enpu_stress_test in a 1 GiB VM, kernel $kver"
start=$(date +%s)
sh scripts/vm/run-vm.sh "$kver" "$out/initramfs.cpio.gz" "$out/console.log" $((2 * secs + 900))
tr -d '\r' <"$out/console.log" >"$out/console.txt"
echo "soak: the VM ran $(( $(date +%s) - start )) s; console: $out/console.txt"

fail=0
check() {
	if grep -qE "$2" "$out/console.txt"; then echo "ok - $1"; else echo "not ok - $1"; fail=1; fi
}
grep -E 'seed [0-9]|# worker:| jobs$|^(not )?ok [0-9]+ |^ENPU-VM-STATS: jobs_submitted' "$out/console.txt" | head -n 60
check "enpu_fuzz_test exited 0" '^ENPU-VM: enpu_fuzz_test exit=0$'
check "enpu_stress_test exited 0" '^ENPU-VM: enpu_stress_test exit=0$'
check "rmmod enpu" '^ENPU-VM: rmmod enpu ok'
check "no jobs alive before rmmod" '^ENPU-VM-STATS: jobs_alive 0$'
check "no BOs alive before rmmod" '^ENPU-VM-STATS: bos_alive 0$'
check "VM reached its end marker" '^ENPU-VM-END'
if grep -E 'WARNING:|BUG:|Oops|Kernel panic|Call Trace:|general protection|UBSAN|refcount_t:|Out of memory' \
	"$out/console.txt" >"$out/kernel-problems.txt"; then
	sed 's/^/# /' "$out/kernel-problems.txt" | head -n 40
	echo "not ok - no kernel warnings"
	fail=1
else
	echo "ok - no kernel warnings"
fi
exit $fail
