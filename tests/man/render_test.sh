#!/bin/sh
# render_test.sh MANROOT MANGEN PAGES - every page under MANROOT (the build tree's man/) goes
# through groff with every warning enabled (-ww), as man would format it, and must give none; the
# pages there are exactly those the sources make (mangen names).
set -eu
root=$1 mangen=$2 pages=$3
command -v groff >/dev/null || { echo "FAIL: groff is not installed (Debian: groff-base)"; exit 1; }
cd "$root"
failed=0 count=0
expected=$("$mangen" names "$pages" | awk '{ print "man" $1 "/" $2 "." $1 }' | sort)
present=$(ls man[1-9]/* | sort)
if [ "$expected" != "$present" ]; then
  echo "FAIL: the pages in $root differ from the sources' names:"
  printf '%s\n' "$expected" >expected.tmp
  printf '%s\n' "$present" | diff expected.tmp - || true
  rm -f expected.tmp
  failed=1
fi
for page in man[1-9]/*; do
  count=$((count + 1))
  # From the root, so that a link page's ".so man3/..." resolves as man resolves it.
  warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1) || true
  if [ -n "$warnings" ]; then
    echo "FAIL: $page:"
    printf '%s\n' "$warnings"
    failed=1
  fi
  if ! head -n 1 "$page" | grep -q '^\.so ' && ! grep -q '^\.TH ' "$page"; then
    echo "FAIL: $page has no .TH line"
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1
echo "PASS: $count pages render without warnings"
