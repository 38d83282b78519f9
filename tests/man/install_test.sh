#!/bin/sh
# install_test.sh BUILD MANDIR MANGEN PAGES - installs the manual pages of BUILD into a temporary
# prefix (cmake --install, component man) and checks that man -w finds each name the pages document,
# in its section, there, that nothing else was installed, and that a link page shows its target.
set -eu
build=$1 mandir=$2 mangen=$3 pages=$4
command -v man >/dev/null || { echo "FAIL: man is not installed (Debian: man-db)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" --component man >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
root=$tmp/prefix/$mandir
"$mangen" names "$pages" >"$tmp/names"
failed=0 count=0
while read -r section name; do
  count=$((count + 1))
  want=$root/man$section/$name.$section
  # man -w names a link page's target (man-db follows ".so" there).
  target=$(sed -n 's|^\.so \(man[1-9]/.*\)$|\1|p' "$want" 2>/dev/null | head -n 1)
  got=$(man -M "$root" -w "$section" "$name" 2>&1) || true
  if [ "$got" != "$want" ] && { [ -z "$target" ] || [ "$got" != "$root/$target" ]; }; then
    echo "FAIL: man -M $root -w $section $name: '$got', not $want${target:+ or $root/$target}"
    failed=1
  fi
  echo "man$section/$name.$section" >>"$tmp/expected"
done <"$tmp/names"
[ "$count" -gt 0 ] || { echo "FAIL: mangen names listed no pages"; exit 1; }
(cd "$root" && find . -type f | sed 's|^\./||') | sort >"$tmp/installed"
sort "$tmp/expected" | diff - "$tmp/installed" >"$tmp/diff" ||
  { echo "FAIL: installed files differ from the pages' names (< expected, > installed):"; cat "$tmp/diff"; failed=1; }
# A link page (Also:) shows the page it points to.
file=$(grep -l '^\.so ' "$root"/man*/* 2>/dev/null | head -n 1) || true
if [ -n "$file" ]; then
  target=$(sed -n 's|^\.so man[1-9]/\(.*\)\.[1-9]$|\1|p' "$file")
  base=$(basename "$file")
  MANPAGER=cat MANWIDTH=80 man -M "$root" "${base##*.}" "${base%.*}" >"$tmp/shown" 2>&1 || true
  grep -q "^ *$target, " "$tmp/shown" ||
    { echo "FAIL: man ${base##*.} ${base%.*} does not show the page of $target:"; head -n 5 "$tmp/shown"; failed=1; }
fi
[ "$failed" -eq 0 ] || exit 1
echo "PASS: man -w finds all $count names in $root"
