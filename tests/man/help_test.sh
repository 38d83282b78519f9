#!/bin/sh
# help_test.sh BSPRUN MANGEN BSPRUN_PAGE OPTIONS_CPP [-D NAME=VALUE]... - bsprun --help prints
# exactly the plain-text rendering of bsprun.1.md (with the build's placeholders), and mentions
# every option that bsprun's parser (parse_options in OPTIONS_CPP) accepts.
set -eu
bsprun=$1 mangen=$2 page=$3 options=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
"$bsprun" --help all >"$tmp/help" || { echo "FAIL: bsprun --help all exits $?"; exit 1; }
"$mangen" text "$@" "$page" >"$tmp/page"
if ! cmp -s "$tmp/page" "$tmp/help"; then
  echo "FAIL: bsprun --help all differs from the text of $page (< page, > --help all):"
  diff "$tmp/page" "$tmp/help" | head -n 40 || true
  failed=1
fi
# The option names of the parser: the keys of its tables ({"--name", ...}) and the options it
# compares arguments with (arg == "--mca"), between parse_options and the end of its loop.
sed -n '/^Options parse_options(/,/opt\.given\.assign/p' "$options" |
  grep -oE '\{"--?[a-zA-Z][-a-zA-Z]*"|arg == "--?[a-zA-Z][-a-zA-Z]*"' |
  sed 's/^[^"]*"//; s/"$//' | sort -u >"$tmp/options"
count=$(wc -l <"$tmp/options")
[ "$count" -ge 20 ] || { echo "FAIL: found only $count options in $options: has parse_options changed shape?"; exit 1; }
while read -r option; do
  grep -qE -- "(^|[^-a-zA-Z0-9])$option([^-a-zA-Z0-9]|\$)" "$tmp/help" ||
    { echo "FAIL: bsprun --help all does not mention $option"; failed=1; }
done <"$tmp/options"
[ "$failed" -eq 0 ] || exit 1
echo "PASS: bsprun --help all is $page, and names all $count options"
