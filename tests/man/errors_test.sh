#!/bin/sh
# errors_test.sh MANGEN - mangen refuses pages it cannot take (line 1, the names, the sections,
# placeholders) with one line "FILE:LINE: what" and exit status 1 (a wrong command line: 2), and
# takes a well-formed page that uses every construct the pages use.
set -eu
mangen=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# expect NAME.S.md LINE PATTERN: the page (on stdin) fails with "NAME.S.md:LINE: ..." matching
# PATTERN (LINE empty: the file as a whole).
expect() {
  file=$tmp/$1 line=$2 pattern=$3
  cat >"$file"
  status=0
  "$mangen" pages --out "$tmp/out" -D MPI=x "$file" >"$tmp/stdout" 2>"$tmp/stderr" || status=$?
  where=$file${line:+:$line}
  if [ "$status" -ne 1 ]; then
    echo "FAIL: $1: exit status $status, not 1"
    failed=1
  elif ! grep -qF "mangen: $where: " "$tmp/stderr" || ! grep -qE -- "$pattern" "$tmp/stderr" ||
       [ "$(wc -l <"$tmp/stderr")" -ne 1 ]; then
    echo "FAIL: $1: expected one line 'mangen: $where: ...$pattern...', got:"
    cat "$tmp/stderr"
    failed=1
  else
    echo "ok: $(cat "$tmp/stderr")"
  fi
  rm -f "$file"
}

printf 'bsp_put(3) - no hash\n\n## DESCRIPTION\nText.\n' |
  expect title.3.md 1 "line 1 must be '# NAME\\(SECTION\\) - one-line summary'"
printf '# other(3) - a summary\n\n## DESCRIPTION\nText.\n' |
  expect name.3.md 1 'the title names other\(3\) but the file is name\.3\.md'
printf '# page(3) - a summary\n\n## DESCRIPTION\nText.\n' |
  expect page.md '' "a page's file is named NAME\.SECTION\.md"
printf '# code(1) - a summary\n\n## EXAMPLE\n```\nint x;\n' |
  expect code.1.md 4 'code block not closed'
printf '# lower(1) - a summary\n\n## Description\nText.\n' |
  expect lower.1.md 3 'a heading is upper case'
printf '# early(1) - a summary\nSome text.\n\n## DESCRIPTION\nText.\n' |
  expect early.1.md 2 'text before the first section'
printf '# names(3) - a summary\nAlso: good, bad name\n\n## DESCRIPTION\nText.\n' |
  expect names.3.md 2 "'bad name' is not a name"
printf '# twice(1) - a summary\n\n## DESCRIPTION\nText.\n\n## DESCRIPTION\nMore.\n' |
  expect twice.1.md 6 'section DESCRIPTION again \(first at line 3\)'
printf '# empty(1) - a summary\n\n## DESCRIPTION\n\n## SEE ALSO\nbsprun(1)\n' |
  expect empty.1.md 3 'section DESCRIPTION has no text'
printf '# named(1) - a summary\n\n## NAME\nnamed - again\n' |
  expect named.1.md 3 "no '## NAME'"
printf '# place(1) - a summary\n\n## DESCRIPTION\nBuilt with @NOPE@.\n' |
  expect place.1.md 4 'unknown placeholder @NOPE@ \(known: @MPI@\)'
printf '# utf(1) - a summary\n\n## DESCRIPTION\nLatin-1: \351t\351.\n' |
  expect utf.1.md 4 'not UTF-8'
printf '# level(1) - a summary\n\n## DESCRIPTION\n### Sub\nText.\n' |
  expect level.1.md 4 "headings are '## HEADING' lines"

# The same name documented by two pages.
printf '# one(3) - a summary\nAlso: shared\n\n## DESCRIPTION\nText.\n' >"$tmp/one.3.md"
printf '# two(3) - a summary\nAlso: shared\n\n## DESCRIPTION\nText.\n' |
  { cat >"$tmp/two.3.md"; status=0
    "$mangen" names "$tmp/one.3.md" "$tmp/two.3.md" >/dev/null 2>"$tmp/stderr" || status=$?
    if [ "$status" -ne 1 ] || ! grep -qF "$tmp/two.3.md:2: shared(3) is documented in $tmp/one.3.md already" "$tmp/stderr"; then
      echo "FAIL: a name on two pages: status $status:"; cat "$tmp/stderr"; failed=1
    else echo "ok: $(cat "$tmp/stderr")"; fi; }

# A wrong command line: exit status 2 and the usage.
status=0
"$mangen" frobnicate >/dev/null 2>"$tmp/stderr" || status=$?
if [ "$status" -ne 2 ] || ! grep -q '^Usage: mangen' "$tmp/stderr"; then
  echo "FAIL: mangen frobnicate: exit status $status"; cat "$tmp/stderr"; failed=1
fi

# Every construct at once is fine, and the plain text comes out as --help lays it out: as man
# would, but 4 in, keeping the lines of a paragraph.
cat >"$tmp/good.1.md" <<'PAGE'
# good(1) - a page with every construct
Also: fine

## SYNOPSIS
```
good [--flag] FILE
```

## DESCRIPTION
A paragraph with `code`, **bold**, *italic*, g*h, \*stars\*, BSPG_SUBJOB and a reference, good(1).
.A line that starts with a dot,
'and one that starts with a quote.
Backslash \ and dash - and 2^22.

1. first step,
   continued;
2. second step.

A paragraph right after the list.

- a bullet
  continued
- another

```
good x
```

## OPTIONS
`--flag`
:   What it does,
    on two lines.

    A second paragraph, and code:

        good --flag x

75
:   A short term shares its line.

## EXIT STATUS
0
:   Success.
PAGE
cat >"$tmp/good.txt" <<'TEXT'
NAME
    good, fine - a page with every construct

SYNOPSIS
    good [--flag] FILE

DESCRIPTION
    A paragraph with code, bold, italic, g*h, *stars*, BSPG_SUBJOB and a reference, good(1).
    .A line that starts with a dot,
    'and one that starts with a quote.
    Backslash \ and dash - and 2^22.

    1.  first step,
        continued;
    2.  second step.

    A paragraph right after the list.

    - a bullet
      continued
    - another

        good x

OPTIONS
    --flag
        What it does,
        on two lines.

        A second paragraph, and code:

            good --flag x

    75  A short term shares its line.

EXIT STATUS
    0   Success.
TEXT
if ! "$mangen" text "$tmp/good.1.md" >"$tmp/got.txt" 2>"$tmp/stderr"; then
  echo "FAIL: a good page is refused:"; cat "$tmp/stderr"; failed=1
elif ! diff "$tmp/good.txt" "$tmp/got.txt"; then
  echo "FAIL: the plain text of the good page (< expected, > got)"; failed=1
fi
# A character other than ASCII, in a page of section 3 (the text of --help is ASCII).
printf '# micro(3) - a summary\n\n## DESCRIPTION\nTook 5 \302\265s.\n' >"$tmp/micro.3.md"
mkdir -p "$tmp/man"
if ! "$mangen" pages --out "$tmp/man" "$tmp/good.1.md" "$tmp/micro.3.md" 2>"$tmp/stderr"; then
  echo "FAIL: mangen pages refuses the good pages:"; cat "$tmp/stderr"; failed=1
else
  [ "$(cat "$tmp/man/man1/fine.1")" = ".so man1/good.1" ] || { echo "FAIL: link page fine.1"; failed=1; }
  for want in '^\\&\.A line' "^\\\\&'and" 'Backslash \\e and dash \\- ' '^\.TP$' '^\.IP "1\." 4$' \
      '^\.IP "\\\(bu" 2$' '\\fBcode\\fR' '\\fIitalic\\fR' 'g\*h' '\\fBgood\\fP\(1\)' '^\.EX$' \
      '^\.TH "good" "1" ' '^good, fine \\- a page with every construct$'; do
    grep -qE -- "$want" "$tmp/man/man1/good.1" || { echo "FAIL: good.1 lacks /$want/"; failed=1; }
  done
  grep -qF 'Took 5 \[u00B5]s.' "$tmp/man/man3/micro.3" || { echo "FAIL: micro.3 lacks \\[u00B5]"; failed=1; }
  if command -v groff >/dev/null; then
    warnings=$(cd "$tmp/man" && groff -man -Tutf8 -ww -z man1/good.1 man1/fine.1 man3/micro.3 2>&1) || true
    [ -z "$warnings" ] || { echo "FAIL: groff warns about good.1: $warnings"; failed=1; }
  fi
fi
# ... but not in the text of --help: groff's warning, naming the page.
status=0
"$mangen" text "$tmp/micro.3.md" >/dev/null 2>"$tmp/stderr" || status=$?
if [ "$status" -ne 1 ] || ! grep -qF "mangen: $tmp/micro.3.md: groff: " "$tmp/stderr"; then
  echo "FAIL: mangen text of a page with a character other than ASCII: status $status:"
  cat "$tmp/stderr"; failed=1
fi
[ "$failed" -eq 0 ] || exit 1
echo "PASS: mangen's errors name the file and line"
