#!/bin/sh
# A starter that complains before it has started any process and then waits for ever, as Open
# MPI 4.1's mpirun does after a node name it refuses: a framed block, NUL bytes and all.
# Stands in for the real one through BSPG_MPIRUN; its arguments are ignored.
printf -- '--------------------------------------------------------------------------\n' >&2
printf '\000\000The starter cannot place   the job:\n   node "odd_name" is not valid.\n' >&2
printf -- '--------------------------------------------------------------------------\n' >&2
printf 'a note on stdout\n'
exec sleep 600
