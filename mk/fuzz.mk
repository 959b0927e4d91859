# Fuzzers and the damaged-file corpus (issue 2).
#
#   make fuzz                 build every fuzz/fuzz-*.c with libFuzzer into build-fuzz/
#   make fuzz-run             run each for FUZZ_SECONDS (default 20) on fuzz/corpus-<name>/
#   make SAN=1 bad-input      build the damaged-file program into build-san/
#
# The .ert checksum uses zlib's crc32.
LDLIBS += -lz
