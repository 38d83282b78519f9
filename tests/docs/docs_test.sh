#!/usr/bin/env bash
# docs_test.sh - checks of the README and the user guide (docs/).
#
#   docs_test.sh size FILE MAX_BYTES
#       FILE is at most MAX_BYTES long.
#   docs_test.sh links SOURCE_DIR
#       every relative link of README.md and docs/*.md points at a file or directory that exists,
#       and a link with #anchor at a heading of that page; every docs/*.md is linked from README.md.
#   docs_test.sh hello SOURCE_DIR BUILD_DIR NPROCS
#       the README's hello world: its program is the file it names, and its commands (with
#       `-p NPROCS` for the README's process count) compile that program with the build tree's
#       bspcc and run it with bsprun, printing the lines the README shows (in any order).
# Each prints one line saying what held, or FAIL lines saying what did not, and exits 1.
set -u

fail=0
complain() { echo "FAIL: $*"; fail=1; }

# The text between the lines holding "<!-- NAME: begin" and "<!-- NAME: end -->" of FILE, without
# the code fence lines.
block() {
  awk -v begin="<!-- $2: begin" -v end="<!-- $2: end -->" '
    index($0, end) == 1 { inside = 0 }
    inside && !/^```/ { print }
    index($0, begin) == 1 { inside = 1 }' "$1"
}

# The anchors of a Markdown file's headings, as GitHub makes them (ASCII headings): lower case,
# everything but letters, digits, spaces, '-' and '_' left out, spaces turned into '-'.
anchors() {
  awk '/^```/ { fenced = !fenced; next }
       !fenced && /^#+ / {
         h = $0; sub(/^#+ +/, "", h); h = tolower(h)
         gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h); print h }' "$1"
}

# The link targets of a Markdown file, outside code blocks and code spans: one per line.
links() {
  awk '/^```/ { fenced = !fenced; next } !fenced { gsub(/`[^`]*`/, ""); print }' "$1" |
    grep -o '\]([^) ]*' | sed 's/^](//'
}

check_links() {
  local src=$1 file target path anchor n=0
  for file in "$src/README.md" "$src"/docs/*.md; do
    while IFS= read -r target; do
      case "$target" in
        http://*|https://*|mailto:*) continue ;;
        '') complain "${file#"$src"/}: an empty link"; continue ;;
      esac
      n=$((n + 1))
      path=${target%%#*}
      anchor=
      [ "$path" = "$target" ] || anchor=${target#*#}
      if [ -z "$path" ]; then
        path=$file
      else
        path=$(dirname "$file")/$path
      fi
      if [ ! -e "$path" ]; then
        complain "${file#"$src"/}: the link '$target' points at nothing"
      elif [ -n "$anchor" ] && ! anchors "$path" | grep -qxF -- "$anchor"; then
        complain "${file#"$src"/}: the link '$target': no heading of that page has the anchor '$anchor'"
      fi
    done < <(links "$file")
  done
  for file in "$src"/docs/*.md; do
    links "$src/README.md" | grep -qxF "docs/${file##*/}" ||
      complain "README.md does not link the guide's page docs/${file##*/}"
  done
  [ $fail -eq 0 ] && echo "docs: all $n relative links of README.md and docs/*.md resolve"
}

check_hello() {
  local src=$1 build=$2 nprocs=$3 work named readme_p sum
  local readme=$src/README.md
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  # The program: the file the begin marker names, word for word.
  named=$(grep -m1 '^<!-- hello world: begin' "$readme" | sed -n 's/.*the text of \([^;)]*\).*/\1/p')
  [ -n "$named" ] || { complain "README.md: no '<!-- hello world: begin (the text of FILE...' line"; return; }
  block "$readme" "hello world" > "$work/program.c"
  [ -s "$work/program.c" ] || { complain "README.md: no hello world program between its markers"; return; }
  if ! diff -u "$src/$named" "$work/program.c" > "$work/diff"; then
    complain "README.md's hello world is not the text of $named:"; cat "$work/diff"
  fi
  # The commands, run in a directory where build/ is the build tree and the named file holds the
  # README's program, with the process count replaced.
  block "$readme" "hello world commands" > "$work/commands"
  [ -s "$work/commands" ] || { complain "README.md: no hello world commands between their markers"; return; }
  readme_p=$(grep -o -- '-p [0-9]*' "$work/commands" | head -n1 | cut -d' ' -f2)
  [ -n "$readme_p" ] || { complain "README.md: the hello world commands give no '-p N'"; return; }
  mkdir -p "$work/run/$(dirname "$named")"
  cp "$work/program.c" "$work/run/$named"
  ln -s "$build" "$work/run/build"
  sed "s/-p $readme_p\b/-p $nprocs/" "$work/commands" > "$work/run/commands.sh"
  # expected P: the lines hello.c prints on P processes, sorted.
  expected() {
    local p=$1 i
    for ((i = 0; i < p; i++)); do echo "hello from process $i of $p"; done
    sum=$((p * (p - 1) / 2))
    echo "process 0 collected pids summing to $sum (expected $sum)"
  }
  # The output the README shows is what its commands print.
  block "$readme" "hello world output" | sort > "$work/shown"
  expected "$readme_p" | sort > "$work/want_shown"
  if ! diff -u "$work/want_shown" "$work/shown" > "$work/diff"; then
    complain "README.md's hello world output is not what $readme_p processes print (sorted):"
    cat "$work/diff"
  fi
  [ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  local status=0
  (cd "$work/run" && bash -e commands.sh) > "$work/output" 2>&1 || status=$?
  sort "$work/output" > "$work/got"
  expected "$nprocs" | sort > "$work/want"
  if [ $status -ne 0 ] || ! diff -u "$work/want" "$work/got" > "$work/diff"; then
    complain "the README's hello world commands (exit status $status):"
    sed 's/^/  | /' "$work/run/commands.sh"
    echo "printed (sorted; - expected, + printed):"; cat "$work/diff"
  fi
  [ $fail -eq 0 ] && echo "docs: the README's hello world ($named) compiled and ran on $nprocs processes"
}

case "${1:-}" in
  size)
    [ $# -eq 3 ] || { echo "usage: docs_test.sh size FILE MAX_BYTES" >&2; exit 2; }
    bytes=$(wc -c < "$2")
    if [ "$bytes" -le "$3" ]; then echo "docs: $2 has $bytes bytes, at most $3"
    else complain "$2 has $bytes bytes, more than $3: move text into the user guide (docs/)"; fi ;;
  links)
    [ $# -eq 2 ] || { echo "usage: docs_test.sh links SOURCE_DIR" >&2; exit 2; }
    check_links "$2" ;;
  hello)
    [ $# -eq 4 ] || { echo "usage: docs_test.sh hello SOURCE_DIR BUILD_DIR NPROCS" >&2; exit 2; }
    check_hello "$2" "$3" "$4" ;;
  *) echo "usage: docs_test.sh size|links|hello ..." >&2; exit 2 ;;
esac
exit $fail
