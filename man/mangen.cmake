# mangen.cmake - what man/ and launcher/ share about the manual pages (see man/README.md).
# The values of the placeholders a page may use (@MPI@, @STARTER@, @MPICC@, @MPICXX@, @VERSION@),
# so that the pages and bsprun --help name the MPI this build uses.
set(BSPG_MAN_DEFINES
  -D "MPI=${BSPG_MPI_NAME}" -D "STARTER=${BSPG_MPI_STARTER}" -D "MPICC=${BSPG_MPICC}"
  -D "MPICXX=${BSPG_MPICXX}" -D "VERSION=${PROJECT_VERSION}")

# bspg_plain_manual(PAGE SYMBOL OUTPUT): OUTPUT, a C++ source that defines `const char SYMBOL[]`
# (SYMBOL may name a namespace, a::b::kText) as PAGE in plain text (lowdown, then groff), at build
# time.
# Add OUTPUT to a target of the calling directory.
function(bspg_plain_manual page symbol output)
  add_custom_command(OUTPUT ${output}
    COMMAND mangen cpp ${BSPG_MAN_DEFINES} --symbol ${symbol} -o ${output} ${page}
    DEPENDS mangen ${page}
    COMMENT "Generating ${output} from ${page}"
    VERBATIM)
endfunction()
