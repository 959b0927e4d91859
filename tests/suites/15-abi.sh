#!/bin/sh
# The ABI: libedgert.so exports exactly the symbols listed in
# libruntime/edgert.symbols, and the public header stands alone in C and C++.
: "${ERT_BUILD:=build}"
p=0 f=0
pass() { p=$((p + 1)); echo "ok   $1"; }
fail() { f=$((f + 1)); echo "FAIL $1"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$ERT_BUILD/libedgert.so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort >"$tmp/got"
if diff -u libruntime/edgert.symbols "$tmp/got" >"$tmp/diff"; then
	pass "exported symbols match libruntime/edgert.symbols"
else
	cat "$tmp/diff"
	fail "exported symbols differ from libruntime/edgert.symbols (update it on purpose)"
fi

printf '#include <edgert.h>\nint main(void) { ert_config c; ert_config_init(&c); return (int)c.num_backends - 1; }\n' >"$tmp/h.c"
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -Ilibruntime/include "$tmp/h.c" \
	"$ERT_BUILD/libedgert.so" -o "$tmp/h" && LD_LIBRARY_PATH="$ERT_BUILD" "$tmp/h"; then
	pass "edgert.h compiles alone (C11, -pedantic) and links against libedgert.so"
else
	fail "edgert.h does not compile alone or the program fails"
fi
cp "$tmp/h.c" "$tmp/h.cc"
if command -v g++ >/dev/null 2>&1; then
	if g++ -std=c++11 -Wall -Wextra -Werror -Ilibruntime/include -c "$tmp/h.cc" -o "$tmp/hpp.o"; then
		pass "edgert.h compiles as C++"
	else
		fail "edgert.h does not compile as C++"
	fi
fi
if [ -f "$ERT_BUILD/edgert.pc" ] && grep -q -- '-ledgert' "$ERT_BUILD/edgert.pc"; then
	pass "edgert.pc names the library"
else
	fail "edgert.pc missing or wrong"
fi
echo "abi: $p passed, $f failed"
[ "$f" -eq 0 ]
