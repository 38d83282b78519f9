#!/bin/sh
# lowdown_test.sh MANGEN PAGES [-D NAME=VALUE]... - every page of PAGES goes through lowdown
# (mangen roff) without a word on stderr, and its roff opens with the NAME section: the page's
# name, its Also: names and the summary of line 1, as whatis and apropos read them.
set -eu
mangen=$1 pages=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 count=0
for page in "$pages"/*.md; do
  count=$((count + 1))
  status=0
  "$mangen" roff "$@" "$page" >"$tmp/roff" 2>"$tmp/stderr" || status=$?
  if [ "$status" -ne 0 ] || [ -s "$tmp/stderr" ]; then
    echo "FAIL: $page: exit status $status:"
    cat "$tmp/stderr"
    failed=1
    continue
  fi
  # Lines 1 and 2 of the source, set as roff does: "name, other \- summary".
  want=$(sed -n -e '1s/^# \([^(]*\)([1-9]) - \(.*\)$/\1@\2/p' -e '2s/^Also: *\(.*\)$/\1/p' "$page" |
    awk -F@ 'NR == 1 { name = $1; summary = $2 } NR == 2 { name = name ", " $0 }
             END { print name " - " summary }' | sed 's/-/\\-/g')
  # The first section (lowdown 1.0.0 puts the heading on the line after .SH) and its text.
  first=$(awk '/^\.SH$/ { getline; print; exit }
               /^\.SH / { sub(/^\.SH "?/, ""); sub(/"$/, ""); print; exit }' "$tmp/roff")
  got=$(awk 'seen && !/^\./ { print; exit } /^NAME$|^\.SH "?NAME"?$/ { seen = 1 }' "$tmp/roff")
  if [ "$first" != NAME ] || [ "$got" != "$want" ]; then
    echo "FAIL: $page: the first section is '$first', its text '$got', not NAME with '$want'"
    failed=1
  fi
done
[ "$count" -gt 0 ] || { echo "FAIL: no pages in $pages"; exit 1; }
[ "$failed" -eq 0 ] || exit 1
echo "PASS: lowdown renders all $count pages without a warning, each with its NAME section"
